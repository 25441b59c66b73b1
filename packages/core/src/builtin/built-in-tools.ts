/**
 * BuiltInTools: the static list of the 12 built-in tools, merged into one Location-scoped layer. It provides no
 * service of its own; each member registers itself through `Tools.Service` for the lifetime of the Location.
 *
 * The caller supplies the shared Location services once: `Tools`/`ToolRegistry`, `PermissionV2`,
 * `LocationMutation`, `FileMutation`, `Config`, `Location`, `QuestionV2`, `SkillV2`, `SessionTodo`, `Image`,
 * `Search`, `AppProcess`, an `HttpClient`, `WebSearchTool.Config`, and `FileSystem`/`Path` (`NodeContext.layer`).
 *
 * Still needs porting (one line, kept as the reference states it):
 * task, LSP, repo_clone, repo_overview, plan_exit, and code mode. Keep MCP and plugin transforms separate from this static built-in list.
 *
 * MCP and plugin tools use their own scoped registrations, never this list; provider/model filtering belongs to a
 * future materialization phase.
 *
 * @since 0.1.0
 */
import * as Layer from "effect/Layer"
import * as ApplyPatchTool from "./apply-patch-tool.js"
import * as BashTool from "./bash-tool.js"
import * as EditTool from "./edit-tool.js"
import * as GlobTool from "./glob-tool.js"
import * as GrepTool from "./grep-tool.js"
import * as QuestionTool from "./question-tool.js"
import * as ReadTool from "./read-tool.js"
import * as ReadToolFileSystem from "./read-tool-file-system.js"
import * as SkillTool from "./skill-tool.js"
import * as TodoWriteTool from "./todo-write-tool.js"
import * as WebFetchTool from "./web-fetch-tool.js"
import * as WebSearchTool from "./web-search-tool.js"
import * as WriteTool from "./write-tool.js"

/**
 * The registered names, in registration order.
 *
 * @since 0.1.0
 * @category utilities
 */
export const names = [
  ApplyPatchTool.name,
  BashTool.name,
  EditTool.name,
  GlobTool.name,
  GrepTool.name,
  QuestionTool.name,
  ReadTool.name,
  SkillTool.name,
  TodoWriteTool.name,
  WebFetchTool.name,
  WebSearchTool.name,
  WriteTool.name,
] as const

/**
 * The 12 built-in tool layers merged in the order above (which is also the catalogue order). `read`'s filesystem
 * part is built here from the caller's `FileSystem`, so the caller's list stays the one above.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.mergeAll(
  ApplyPatchTool.layer,
  BashTool.layer,
  EditTool.layer,
  GlobTool.layer,
  GrepTool.layer,
  QuestionTool.layer,
  ReadTool.layer.pipe(Layer.provide(ReadToolFileSystem.layer)),
  SkillTool.layer,
  TodoWriteTool.layer,
  WebFetchTool.layer,
  WebSearchTool.layer,
  WriteTool.layer,
)
