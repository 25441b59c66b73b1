/**
 * The approval to start a program a project's own document names: an MCP server's command or URL, a plugin's
 * module. A repository must not be able to run a program by being opened, so such a program starts only after a
 * `project_program` ask is allowed — by a rule naming the action exactly, or by the user in any approval channel.
 * The resource is the exact program (`resource`); an `always` answer saves exactly that, never a wildcard, so an
 * approval is void as soon as the document names another program. Programs from the user's configuration
 * directory need no such approval. See docs/mcp-tools.md.
 *
 * @since 0.4.0
 */
import type * as Effect from "effect/Effect"
import type * as SessionV2 from "../place/session.js"
import { PROJECT_PROGRAM_ACTION } from "../values/internal/resource-prefix.js"
import * as Wildcard from "../values/wildcard.js"
import type { AssertInput } from "./internal/schema.js"
import type { Error, Interface } from "./internal/service.js"

/**
 * The action of the ask (`project_program`).
 *
 * @since 0.4.0
 * @category constants
 */
export const ACTION: typeof PROJECT_PROGRAM_ACTION = PROJECT_PROGRAM_ACTION

/**
 * A program a document names: a command line (the program and its arguments), a URL, or a module path.
 *
 * @since 0.4.0
 * @category models
 */
export type Program =
  | { readonly command: ReadonlyArray<string> }
  | { readonly url: string }
  | { readonly module: string }

const BARE = /^[A-Za-z0-9_@%+=:,./-]+$/

/**
 * The resource of a program: a command line with every argument that is not a plain word quoted as a JSON string
 * (so spaces, quotes and control characters cannot hide one argument inside another), a URL or a module path as
 * written.
 *
 * @since 0.4.0
 * @category utilities
 */
export const resource = (program: Program): string => {
  if ("command" in program)
    return program.command.map((part) => (BARE.test(part) ? part : JSON.stringify(part))).join(" ")
  return "url" in program ? program.url : program.module
}

/**
 * What asks to start a program.
 *
 * @since 0.4.0
 * @category models
 */
export interface Request {
  readonly sessionID: string
  readonly agent?: string | undefined
  /** What the program is, for the prompt (`MCP server github`, `plugin lint`). */
  readonly kind: string
  readonly name: string
  /** The document that names it. */
  readonly document: string
  readonly program: Program
}

/**
 * The `PermissionV2.assert` input of a request: action `project_program`, the program as the one resource, saved
 * literally; the prompt shows the program as its command and the document that named it.
 *
 * @since 0.4.0
 * @category constructors
 */
export const assertInput = (request: Request): AssertInput => {
  const program = resource(request.program)
  return {
    sessionID: request.sessionID,
    ...(request.agent === undefined ? {} : { agent: request.agent }),
    action: ACTION,
    resources: [program],
    save: [Wildcard.literal(program)],
    metadata: {
      command: program,
      description: `start the ${request.kind} ${request.name} named by ${request.document}`,
      document: request.document,
      name: request.name,
    },
  }
}

/**
 * Asks to start the program and waits: succeeds once a rule or the user allows it; fails like `PermissionV2.assert`.
 *
 * @since 0.4.0
 * @category utilities
 */
export const approve = (
  permission: Interface,
  request: Request,
): Effect.Effect<void, Error | SessionV2.NotFoundError> => permission.assert(assertInput(request))
