/**
 * `@toolgate/core/egress`: network access by rule for a sandboxed command, a per-call loopback HTTP/CONNECT proxy
 * asking `net:<host>:<port>`. Not in the main entry: the sandbox loads it for `network: "rules"`. See docs/egress.md.
 *
 * @since 0.4.0
 * @category modules
 */
export * as EgressProxy from "../world/egress/egress-proxy.js"
