/**
 * What runs inside a sandbox without a network of its own to reach the CLI's proxy
 * (`startNetworkProxy`): a Node program that listens on a free port of the sandbox's loopback and
 * passes each connection to the proxy's unix socket (its first argument, bound into the sandbox),
 * and prints the port once it listens. It never reads what passes: the proxy decides.
 */
export const proxyForwarderScript = [
  'const net = require("node:net");',
  "const socketPath = process.argv[1];",
  "const server = net.createServer((client) => {",
  "  const upstream = net.connect(socketPath);",
  "  client.pipe(upstream).on('error', () => client.destroy());",
  "  upstream.pipe(client).on('error', () => upstream.destroy());",
  "  client.on('error', () => upstream.destroy());",
  "  upstream.on('error', () => client.destroy());",
  "});",
  'server.listen(0, "127.0.0.1", () => process.stdout.write(`${server.address().port}\\n`));',
].join("\n");

/** Where the proxy's socket directory is mounted in the sandbox. */
export const sandboxProxyDirectory = "/tmp/.simple-agent-loop-proxy";

/** The name of the proxy's socket in its directory. */
export const proxySocketName = "proxy.sock";

/**
 * The shell lines that start the forwarder with `node` (its path in `$1`, the script in `$2`, both
 * shifted away after) and point the usual proxy variables at it, before the command runs. `NO_PROXY` keeps the sandbox's
 * own loopback direct (servers the command starts itself), except the names `throughProxy` lists
 * (an allowed `localhost` means the host's, reached through the proxy).
 */
export function proxyStartScript(throughProxy: readonly string[]): string {
  const direct = ["localhost", "127.0.0.1", "::1"].filter((name) => !throughProxy.includes(name)).join(",");
  return (
    `exec 3< <(NODE_OPTIONS= exec "$1" -e "$2" ${sandboxProxyDirectory}/${proxySocketName}) && read -r port <&3 && exec 3<&- ` +
    `|| { echo "sandbox: the network proxy's forwarder did not start" >&2; exit 125; }; ` +
    `proxy=http://127.0.0.1:$port; ` +
    `export HTTP_PROXY=$proxy HTTPS_PROXY=$proxy http_proxy=$proxy https_proxy=$proxy ALL_PROXY=$proxy all_proxy=$proxy ` +
    `NO_PROXY=${direct} no_proxy=${direct} NODE_USE_ENV_PROXY=1; unset proxy port; shift 2; `
  );
}
