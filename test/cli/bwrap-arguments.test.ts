// The bwrap command line of a sandboxed bash call, built without running anything: mount order
// (covers around the workspace before it, covers inside it after it), modes, network, limits.
import { describe, expect, it } from "vitest";
import { bwrapArguments, isWithin, type BwrapCall } from "../../src/cli/sandbox/bwrap-arguments.ts";

const call = (overrides: Partial<BwrapCall> = {}): BwrapCall => ({
  sandbox: { mode: "workspace-write", allowNetwork: false, processLimit: { kind: "none" } },
  workspace: "/home/u/project",
  hidden: [],
  command: "make test",
  ...overrides,
});

describe("bwrapArguments", () => {
  it("puts back, read-only, the directories under /tmp that node or the started program live in (a checkout made in /tmp)", () => {
    const args = bwrapArguments(
      call({
        command: ["/tmp/checkout/node_modules/node/bin/node", "/tmp/checkout/test/server.ts"],
        proxy: { socketDirectory: "/tmp/p-1", node: "/tmp/other/bin/node" },
      }),
    );
    const tmpfs = args.indexOf("--tmpfs");
    expect(args.slice(tmpfs, tmpfs + 8)).toStrictEqual([
      ...["--tmpfs", "/tmp"],
      ...["--ro-bind", "/tmp/other", "/tmp/other"],
      ...["--ro-bind", "/tmp/checkout", "/tmp/checkout"],
    ]);
  });

  it("mounts the root read-only, a private /tmp, the workspace writable, and runs the command there without network", () => {
    expect(bwrapArguments(call())).toStrictEqual([
      ...["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"],
      ...["--bind", "/home/u/project", "/home/u/project"],
      "--unshare-all",
      ...["--die-with-parent", "--new-session", "--cap-drop", "ALL"],
      ...["--chdir", "/home/u/project", "--setenv", "TMPDIR", "/tmp"],
      ...["--setenv", "npm_config_cache", "/tmp/.cache/npm", "--setenv", "YARN_CACHE_FOLDER", "/tmp/.cache/yarn"],
      ...["--setenv", "PIP_CACHE_DIR", "/tmp/.cache/pip"],
      ...["--setenv", "GOCACHE", "/tmp/.cache/go-build", "--setenv", "BUN_INSTALL_CACHE_DIR", "/tmp/.cache/bun"],
      "--",
      "bash",
      "-c",
      `ulimit -S -H -f ${4 * 1024 * 1024} || exit 125; exec bash -c "$1"`,
      "bash",
      "make test",
    ]);
  });

  it("runs a program with its arguments as they are, where asked", () => {
    const args = bwrapArguments(call({ command: ["server", "--flag", "a b"], cwd: "/home/u/project/sub" }));
    expect(args.slice(args.indexOf("--chdir"), args.indexOf("--chdir") + 2)).toStrictEqual([
      "--chdir",
      "/home/u/project/sub",
    ]);
    expect(args.slice(args.indexOf("--") + 1)).toStrictEqual([
      "bash",
      "-c",
      `ulimit -S -H -f ${4 * 1024 * 1024} || exit 125; exec "$@"`,
      "bash",
      "server",
      "--flag",
      "a b",
    ]);
  });

  it("binds the proxy's socket directory and starts the forwarder before the command, for --allow-host", () => {
    const sandbox = {
      mode: "workspace-write" as const,
      allowNetwork: false,
      processLimit: { kind: "none" as const },
      allowHosts: [{ host: "api.localhost", subdomains: false, port: undefined }],
    };
    const args = bwrapArguments(call({ sandbox, proxy: { socketDirectory: "/tmp/p-1", node: "/usr/bin/node" } }));
    expect(args.join(" ")).toContain(
      "--ro-bind /tmp/p-1 /tmp/.simple-agent-loop-proxy --unshare-all --die-with-parent",
    );
    expect(args).not.toContain("--share-net");
    const script = args[args.indexOf("--") + 3]!;
    expect(script).toContain('exec 3< <(NODE_OPTIONS= exec "$1" -e "$2" /tmp/.simple-agent-loop-proxy/proxy.sock)');
    // localhost is allowed through the proxy: it is no longer kept direct.
    expect(script).toContain("NO_PROXY=127.0.0.1,::1 no_proxy=127.0.0.1,::1");
    expect(script).toMatch(/shift 2; exec bash -c "\$1"$/);
    expect(args.slice(args.indexOf("--") + 4, args.indexOf("--") + 5)).toStrictEqual(["bash"]);
    expect(args.at(-3)).toBe("/usr/bin/node");
    expect(args.at(-1)).toBe("make test");
    // With the whole network there is no proxy.
    const open = bwrapArguments(
      call({
        sandbox: { ...sandbox, allowNetwork: true },
        proxy: { socketDirectory: "/tmp/p-1", node: "/usr/bin/node" },
      }),
    );
    expect(open.join(" ")).not.toContain("proxy");
  });

  it("binds the workspace read-only in read-only mode, and keeps the network when allowed", () => {
    const args = bwrapArguments(
      call({ sandbox: { mode: "read-only", allowNetwork: true, processLimit: { kind: "none" } } }),
    );
    expect(args.join(" ")).toContain("--ro-bind /home/u/project /home/u/project");
    expect(args).not.toContain("--bind");
    expect(args.join(" ")).toContain("--unshare-all --share-net");
  });

  it("covers hidden paths around the workspace before binding it, and those inside it after", () => {
    const args = bwrapArguments(
      call({
        workspace: "/home/u/.config/tool/work",
        hidden: [
          { path: "/home/u/.ssh", directory: true },
          { path: "/home/u/.config", directory: true },
          { path: "/home/u/.config/tool/work/.netrc", directory: false },
          { path: "/home/u/.config/gcloud", directory: true },
        ],
      }),
    ).join(" ");
    const workspaceBind = args.indexOf("--bind /home/u/.config/tool/work /home/u/.config/tool/work");
    expect(args.indexOf("--tmpfs /home/u/.config --remount-ro /home/u/.config")).toBeLessThan(workspaceBind);
    expect(args.indexOf("--ro-bind /dev/null /home/u/.config/tool/work/.netrc")).toBeGreaterThan(workspaceBind);
    expect(args).toContain("--tmpfs /home/u/.ssh --remount-ro /home/u/.ssh");
    // Inside a covered directory: covered with it, never mounted on the read-only cover.
    expect(args).not.toContain("gcloud");
  });

  it("limits processes with ulimit only in a user namespace of the sandbox's own", () => {
    const rlimit = bwrapArguments(
      call({
        sandbox: { mode: "workspace-write", allowNetwork: false, processLimit: { kind: "rlimit" }, maxProcesses: 50 },
      }),
    );
    expect(rlimit).toContain("--unshare-user");
    expect(rlimit.at(-3)).toMatch(/^ulimit -S -H -u 50 \|\| exit 125; /);
    const cgroup = bwrapArguments(
      call({
        sandbox: {
          mode: "workspace-write",
          allowNetwork: false,
          processLimit: { kind: "cgroup", parent: "/sys/fs/cgroup/pids" },
          maxFileBytes: 1024 * 1024,
        },
      }),
    );
    expect(cgroup).not.toContain("--unshare-user");
    expect(cgroup.at(-3)).toBe('ulimit -S -H -f 1024 || exit 125; exec bash -c "$1"');
  });
});

describe("isWithin", () => {
  it("takes the directory itself and what lies below it, not a sibling sharing its prefix", () => {
    expect(isWithin("/a/b", "/a/b")).toBe(true);
    expect(isWithin("/a/b", "/a/b/c")).toBe(true);
    expect(isWithin("/a/b", "/a/bc")).toBe(false);
    expect(isWithin("/a/b", "/a")).toBe(false);
    expect(isWithin("/a/b", "/a/b/..c")).toBe(true);
  });
});
