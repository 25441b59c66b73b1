/**
 * A loopback stand-in for OpenAI's Responses API, as much of it as `@effect/ai-openai` uses when it streams:
 * `POST /responses` with `stream: true` answers with server-sent events (`response.created`, output items, text
 * deltas, `response.completed`); without it, with the completed response as JSON. Like OpenAI, it refuses a request whose strict function tools break the strict
 * schema rules with a 400 `invalid_request_error`. Each turn of the script sees the request body it answers.
 * Every event it sends is checked against `@effect/ai-openai`'s own event schema (the client silently skips
 * events it cannot decode, so a wrong event would otherwise go unnoticed).
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { ResponseStreamEvent } from "@effect/ai-openai/OpenAiClient"
import { Effect, Schema } from "effect"
import { openAiStrictViolations } from "../../../core/test/support/openai-strict.js"

/** One function tool as the client sent it. */
export interface SentTool {
  readonly type: string
  readonly name: string
  readonly description?: string
  readonly parameters: Record<string, unknown>
  readonly strict?: boolean
}

/** The part of a request body the tests read. */
export interface RequestBody {
  readonly model: string
  readonly stream?: boolean
  readonly input: ReadonlyArray<Record<string, unknown>>
  readonly tools?: ReadonlyArray<SentTool>
}

/** What the model "does" in one turn. */
export type Output =
  | { readonly type: "call"; readonly name: string; readonly arguments: unknown }
  | { readonly type: "text"; readonly text: string }

/** A scripted turn: the outputs of one response, computed from the request. */
export type Turn = (body: RequestBody) => ReadonlyArray<Output>

/** A running fake server. */
export interface Server {
  readonly url: string
  readonly requests: Array<RequestBody>
  /** Status code of every answer, in order. */
  readonly statuses: Array<number>
  /** Strict-rule violations found per refused request. */
  readonly refusals: Array<ReadonlyArray<string>>
  /** Events the server built that the client's schema would not decode (must stay empty). */
  readonly undecodable: Array<string>
}

const decodeEvent = Schema.decodeUnknownEither(ResponseStreamEvent)

const baseResponse = (id: string, status: string, output: ReadonlyArray<unknown>) => ({
  id,
  object: "response",
  status,
  created_at: 1_700_000_000,
  error: null,
  incomplete_details: null,
  output,
  instructions: null,
  model: "gpt-4.1",
  tools: [],
  tool_choice: "auto",
  parallel_tool_calls: true,
  metadata: null,
  temperature: null,
  top_p: null,
  usage: {
    input_tokens: 10,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 5,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 15,
  },
})

/** The violations of OpenAI's strict rules in the strict function tools of `body`, prefixed by tool name. */
export const strictViolations = (body: RequestBody): ReadonlyArray<string> =>
  (body.tools ?? [])
    .filter((tool) => tool.type === "function" && tool.strict === true)
    .flatMap((tool) => openAiStrictViolations(tool.parameters).map((problem) => `${tool.name}: ${problem}`))

const eventsOf = (turn: number, outputs: ReadonlyArray<Output>): Array<Record<string, unknown>> => {
  const id = `resp_${turn}`
  let sequence = 0
  const events: Array<Record<string, unknown>> = [
    { type: "response.created", sequence_number: sequence++, response: baseResponse(id, "in_progress", []) },
  ]
  const done: Array<unknown> = []
  outputs.forEach((output, index) => {
    if (output.type === "call") {
      const item = {
        type: "function_call",
        id: `fc_${turn}_${index}`,
        call_id: `call_${turn}_${index}`,
        name: output.name,
        arguments: "",
        status: "in_progress",
      }
      const args = JSON.stringify(output.arguments)
      const finished = { ...item, arguments: args, status: "completed" }
      events.push(
        { type: "response.output_item.added", sequence_number: sequence++, output_index: index, item },
        {
          type: "response.function_call_arguments.delta",
          sequence_number: sequence++,
          output_index: index,
          item_id: item.id,
          delta: args,
        },
        { type: "response.output_item.done", sequence_number: sequence++, output_index: index, item: finished },
      )
      done.push(finished)
    } else {
      const messageID = `msg_${turn}_${index}`
      const item = { type: "message", id: messageID, role: "assistant", content: [], status: "in_progress" }
      const finished = {
        ...item,
        content: [{ type: "output_text", text: output.text, annotations: [] }],
        status: "completed",
      }
      events.push(
        { type: "response.output_item.added", sequence_number: sequence++, output_index: index, item },
        {
          type: "response.output_text.delta",
          sequence_number: sequence++,
          output_index: index,
          content_index: 0,
          item_id: messageID,
          delta: output.text,
        },
        { type: "response.output_item.done", sequence_number: sequence++, output_index: index, item: finished },
      )
      done.push(finished)
    }
  })
  events.push({
    type: "response.completed",
    sequence_number: sequence++,
    response: baseResponse(id, "completed", done),
  })
  return events
}

/** Starts the fake server on 127.0.0.1 (a random port) for the enclosing scope. */
export const serve = (turns: ReadonlyArray<Turn>) =>
  Effect.acquireRelease(
    Effect.async<{ server: http.Server; state: Server }>((resume) => {
      const state: Omit<Server, "url"> = { requests: [], statuses: [], refusals: [], undecodable: [] }
      const answer = (response: http.ServerResponse, status: number, body: unknown) => {
        state.statuses.push(status)
        response.writeHead(status, { "content-type": "application/json" })
        response.end(JSON.stringify(body))
      }
      const server = http.createServer((request, response) => {
        const chunks: Array<Buffer> = []
        request.on("data", (chunk: Buffer) => chunks.push(chunk))
        request.on("end", () => {
          if (request.method !== "POST" || request.url !== "/responses") {
            return answer(response, 404, { error: { message: "Not found", type: "invalid_request_error" } })
          }
          const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as RequestBody
          const turn = state.requests.length
          state.requests.push(body)
          const problems = strictViolations(body)
          if (problems.length > 0) {
            state.refusals.push(problems)
            return answer(response, 400, {
              error: {
                message: `Invalid schema for function: ${problems[0]}`,
                type: "invalid_request_error",
                param: "tools",
                code: "invalid_function_parameters",
              },
            })
          }
          const script = turns[turn]
          const outputs = script === undefined ? [{ type: "text" as const, text: "(script ended)" }] : script(body)
          const events = eventsOf(turn, outputs)
          if (body.stream !== true) return answer(response, 200, events.at(-1)!.response)
          state.statuses.push(200)
          response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
          for (const event of events) {
            const decoded = decodeEvent(event)
            if (decoded._tag === "Left") state.undecodable.push(`${String(event.type)}: ${decoded.left.message}`)
            response.write(`event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`)
          }
          response.end()
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        resume(Effect.succeed({ server, state: { ...state, url: `http://127.0.0.1:${port}` } }))
      })
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      }),
  ).pipe(Effect.map(({ state }) => state))

/** The arguments a strict model sends: `given`, and `null` for every other property of the advertised tool. */
export const strictArguments = (
  body: RequestBody,
  name: string,
  given: Record<string, unknown>,
): Record<string, unknown> => {
  const tool = body.tools?.find((candidate) => candidate.name === name)
  const properties = (tool?.parameters.properties ?? {}) as Record<string, unknown>
  return Object.fromEntries(Object.keys(properties).map((key) => [key, key in given ? given[key] : null]))
}

/** The `function_call_output` items of a request, by call id. */
export const callOutputs = (body: RequestBody): Map<string, string> =>
  new Map(
    body.input
      .filter((item) => item.type === "function_call_output")
      .map((item) => [String(item.call_id), String(item.output)]),
  )
