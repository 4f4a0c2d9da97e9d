import { CliError } from "./cli-error.ts";
import { checkModelName } from "./model-name.ts";
import type { SelectedModel } from "./provider.ts";

/** The model the next tasks use, and `/model`'s way to change it within the provider. */
export type ModelControl = {
  current: () => SelectedModel;
  /** Switches to model `name` of the current provider; throws a `CliError` for a malformed name or where switching is not possible. */
  select: (name: string) => SelectedModel;
};

/**
 * A `ModelControl` starting at `first`. `choose` makes the model of the same provider with another
 * name (as `--model` would); `refusal`, when set, says why the model cannot change (a cassette is
 * replayed in the order it was recorded).
 */
export function modelControl(options: {
  first: SelectedModel;
  choose: (model: string) => SelectedModel;
  refusal?: string;
  onChange: (selected: SelectedModel) => void;
}): ModelControl {
  let current = options.first;
  return {
    current: () => current,
    select: (name) => {
      const model = checkModelName(name.trim(), "/model");
      if (options.refusal !== undefined) throw new CliError(options.refusal);
      current = options.choose(model);
      options.onChange(current);
      return current;
    },
  };
}
