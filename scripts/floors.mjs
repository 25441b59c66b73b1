/**
 * The floors of packages/core/src, bottom up: the one list that `scripts/check-cycles.mjs` enforces and
 * `scripts/house-plan.mjs` writes into docs/architecture.md.
 *
 * A module imports only its own floor or a lower one. `os` is what a floor's modules reach outside the process
 * through their own imports (see `OS_MODULES`); check-cycles fails when a floor imports a kind it does not list here,
 * and when it lists a kind none of its modules imports, so the house plan says exactly which floors touch the OS.
 */

/**
 * @typedef {"files" | "processes" | "network" | "host" | "database"} OsKind
 * @typedef {{ readonly folder: string, readonly about: string, readonly os: ReadonlyArray<OsKind> }} Floor
 */

/** @type {ReadonlyArray<Floor>} */
export const FLOORS = [
  { folder: "values", about: "pure data and functions: no services, no I/O", os: [] },
  {
    folder: "system",
    about:
      "process-wide services: where files live, the database and its migrations, the one process spawner, the confined walk",
    os: ["files", "processes", "host", "database"],
  },
  {
    folder: "place",
    about:
      "where a call happens: the Location, its project (git), sessions, events, discovered configuration, protected paths",
    os: ["files", "database"],
  },
  {
    folder: "shell",
    about:
      "what a shell command runs, reads and writes: the parser walk (`internal/`), per-program tables (`programs/`), the planner (`plan/`)",
    os: [],
  },
  { folder: "agent", about: "agents and their configured rules; questions put to the user", os: [] },
  {
    folder: "journal",
    about: "the decision journal: every evaluation, ask and answer, with provenance",
    os: ["database"],
  },
  {
    folder: "permission",
    about: "the permission gate: rules, evaluation, the pending queue, saved approvals, hooks, explain and lint",
    os: ["database"],
  },
  { folder: "approvals", about: "the one approval protocol every client speaks, over the pending queue", os: [] },
  {
    folder: "hosts",
    about: "pending asks shared across processes on Postgres (entry `@toolgate/core/hosts`)",
    os: ["database"],
  },
  {
    folder: "tool",
    about: "the tool contract: tool values, the two registries, settlement, the one output boundary",
    os: ["files"],
  },
  {
    folder: "world",
    about:
      "effects a tool has on the world: paths, verified file I/O, child processes, the sandbox, the egress proxy, search",
    os: ["files", "processes", "network", "host", "database"],
  },
  {
    folder: "builtin",
    about: "the twelve built-in tools and `BuiltInTools`",
    os: ["files", "processes", "network", "host"],
  },
  {
    folder: "assembly",
    about: "one-call layers, the turn loop and its call journal, the model interface, the gate that runs hooks, plugins loaded from code and configuration",
    os: ["files", "processes", "network", "database"],
  },
  {
    folder: "serve",
    about: "the HTTP approval API and web page (entry `@toolgate/core/server`)",
    os: ["network"],
  },
  {
    folder: "testing",
    about: "the `Core.layerTest` harness and `ToolTest` (entry `@toolgate/core/testing`)",
    os: ["files", "host"],
  },
  { folder: "entry", about: "the subpath entries of the package, one namespace list each", os: [] },
]

/** The floors the tool contract never imports although they sit below it: hiding a tool is not authorising a call. */
export const POLICY_FLOORS = ["shell", "agent", "journal", "permission", "approvals", "hosts"]

/** Imports forbidden although the floors would allow them: [from folder, to folder]. */
export const FORBIDDEN = POLICY_FLOORS.map((policy) => ["tool", policy])

/**
 * What a value import reaches outside the process. Type-only imports do not count; modules not listed here
 * (`node:path`, `node:crypto`, parsers) touch nothing.
 *
 * @type {ReadonlyArray<readonly [RegExp, ReadonlyArray<OsKind>]>}
 */
export const OS_MODULES = [
  [/^node:fs(\/promises)?$/, ["files"]],
  [/^@effect\/platform\/FileSystem$/, ["files"]],
  [/^@effect\/platform-node\/NodeFileSystem$/, ["files"]],
  [/^node:(child_process|worker_threads|cluster)$/, ["processes"]],
  [/^@effect\/platform\/Command(Executor)?$/, ["processes"]],
  [/^@effect\/platform-node\/NodeCommandExecutor$/, ["processes"]],
  [/^node:(net|dns|http|https|http2|tls|dgram)$/, ["network"]],
  [/^@effect\/platform-node\/Node(HttpClient|HttpServer|Socket)$/, ["network"]],
  [/^@effect\/platform-node\/NodeContext$/, ["files", "processes"]],
  [/^node:os$/, ["host"]],
  [/^@effect\/sql(-[a-z-]+)?\//, ["database"]],
  [/^(better-sqlite3|pg)$/, ["database"]],
]

/** The kinds a module specifier reaches (empty: none). */
export const osKinds = (specifier) => OS_MODULES.filter(([pattern]) => pattern.test(specifier)).flatMap(([, k]) => k)

/** What each kind means, for the house plan. */
export const OS_KINDS = {
  files: "the file system (`node:fs`, the platform `FileSystem`)",
  processes: "child processes and workers (`node:child_process`, `node:worker_threads`, the platform's executor)",
  network: "sockets, DNS and HTTP (`node:net`, `node:dns`, `node:http`, the platform's HTTP client and server)",
  host: "facts of the host (`node:os`: home, tmp, hostname, platform)",
  database: "SQL on the process's database (`@effect/sql` and its drivers)",
}
