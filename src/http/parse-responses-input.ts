import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { quoteClipped } from "../shared/clip-text.js";
import { MessageSchema, Role, ToolCallSchema, type Message, type ToolCall } from "../../gen/modelstub/v1/model_pb.js";
import { requestLimits } from "../engine/request-limits.js";
import { invalid, isObject, limitCount, missing, objectAt, Refusal, stringAt, wrongType, type Obj } from "./refusal.js";

// The `input` of a Responses request, read into the engine's messages: the same messages a chat
// completions client (parseChatRequest) or a gRPC client sends for the same conversation.

const roles: Record<string, Role> = {
  system: Role.SYSTEM,
  developer: Role.SYSTEM,
  user: Role.USER,
  assistant: Role.ASSISTANT,
};

/** Item types modelstub reads; every other type (web_search_call, ...) is refused. */
const itemTypes = "message, function_call, function_call_output, reasoning and item_reference";

/**
 * The text of the assistant message item `id` that this server answered in the session's open
 * episode, or undefined. An SDK that keeps the API's stored items (the Vercel AI SDK's Responses
 * model, `store` left at true) sends `{type: "item_reference", id}` in place of an output message
 * it got before; modelstub stores nothing, but the id names the call, whose reply the episode has.
 */
export type ItemLookup = (id: string) => string | undefined;

/**
 * Text parts joined with nothing between, as chat completions joins its text parts. Both text
 * types are taken on any role: a client that replays `response.output` sends `output_text` parts
 * back on its assistant items, and one that writes its own history may use `input_text` there.
 */
function textAt(v: unknown, param: string): string {
  if (typeof v === "string") return v;
  if (!Array.isArray(v)) wrongType(param, "a string or a list of input_text parts", v);
  return v
    .map((part, i) => {
      const p = objectAt(part, `${param}[${i}]`);
      if (p["type"] !== "input_text" && p["type"] !== "output_text") {
        invalid(`${param}[${i}].type`, `modelstub reads text parts only ({"type":"input_text","text":"..."}), not ${quoteClipped(p["type"] ?? null)}`);
      }
      return p["text"] === undefined ? missing(`${param}[${i}].text`, "the part's text") : stringAt(p["text"], `${param}[${i}].text`);
    })
    .join("");
}

/** A required string field of an item. */
function requiredString(item: Obj, key: string, param: string, what: string): string {
  const v = item[key];
  return v === undefined || v === null ? missing(`${param}.${key}`, what) : stringAt(v, `${param}.${key}`);
}

function messageOf(item: Obj, param: string): Message {
  if (item["role"] === undefined) missing(`${param}.role`, "one of user, system, developer, assistant");
  const roleText = stringAt(item["role"], `${param}.role`);
  const role = roles[roleText];
  if (role === undefined) {
    const hint = roleText === "tool" ? " (a tool result is a function_call_output item)" : "";
    invalid(`${param}.role`, `expected one of user, system, developer, assistant, got ${quoteClipped(roleText)}${hint}`);
  }
  if (item["content"] === undefined || item["content"] === null) missing(`${param}.content`, "a string or a list of input_text parts");
  return create(MessageSchema, { role, content: textAt(item["content"], `${param}.content`) });
}

function toolCallOf(item: Obj, param: string): ToolCall {
  return create(ToolCallSchema, {
    id: requiredString(item, "call_id", param, "the id of the tool call (the call_id of the function_call output item)"),
    name: requiredString(item, "name", param, "the tool's name"),
    arguments: requiredString(item, "arguments", param, "the arguments as a JSON text"),
  });
}

function toolResultOf(item: Obj, param: string): Message {
  const init: MessageInitShape<typeof MessageSchema> = {
    role: Role.TOOL,
    toolCallId: requiredString(item, "call_id", param, "the call_id of the function_call this output answers"),
  };
  if (item["output"] === undefined || item["output"] === null) missing(`${param}.output`, "the tool's output, a string or a list of input_text parts");
  init.content = textAt(item["output"], `${param}.output`);
  return create(MessageSchema, init);
}

/** Counts the function_call items, so a request past the limits is refused before anything is built. */
function checkLimits(list: unknown[]): void {
  limitCount("input", list.length, "items", requestLimits.messages, "in a request");
  const calls = list.filter((x) => isObject(x) && x["type"] === "function_call").length;
  limitCount("the request", calls, "function_call items", requestLimits.toolCalls, "in a request", "input");
}

/**
 * The messages of `input` (a list of items). A `function_call` item joins the tool calls of the
 * assistant message just before it: an assistant message item, or the message that holds the
 * function_call items before it. Otherwise (the first item, or after a user message or a
 * function_call_output) it starts an assistant message with content "", as a turn that only
 * calls tools is over gRPC. `reasoning` items are skipped: modelstub never writes them, and a
 * client that replays a reasoning model's output sends them back between its other items.
 */
export function inputMessages(list: unknown[], items: ItemLookup = () => undefined): Message[] {
  checkLimits(list);
  const messages: Message[] = [];
  // The assistant message a function_call item here would join, if any.
  let open: Message | undefined;
  list.forEach((v, i) => {
    const param = `input[${i}]`;
    const item = objectAt(v, param);
    const type =
      item["type"] === undefined || item["type"] === null
        ? item["role"] !== undefined
          ? "message"
          : missing(`${param}.type`, `the item's type: one of ${itemTypes}`)
        : stringAt(item["type"], `${param}.type`);
    switch (type) {
      case "message": {
        const m = messageOf(item, param);
        messages.push(m);
        open = m.role === Role.ASSISTANT ? m : undefined;
        return;
      }
      case "function_call": {
        if (!open) {
          open = create(MessageSchema, { role: Role.ASSISTANT, content: "" });
          messages.push(open);
        }
        open.toolCalls.push(toolCallOf(item, param));
        limitCount(param, open.toolCalls.length, "tool calls in its assistant turn", requestLimits.toolCallsPerMessage, "in a message");
        return;
      }
      case "function_call_output":
        messages.push(toolResultOf(item, param));
        open = undefined;
        return;
      case "reasoning":
        return;
      case "item_reference": {
        const id = requiredString(item, "id", param, "the id of an output item this server answered");
        const text = items(id);
        if (text === undefined) {
          throw new Refusal({
            message: `${param}.id: no message item ${quoteClipped(id)} in this session's episode; modelstub resolves the ids of the assistant messages it answered in the session since its last reset (msg_gen-<session>-<call>); send the item itself`,
            param: `${param}.id`,
            code: "invalid_value",
          });
        }
        const m = create(MessageSchema, { role: Role.ASSISTANT, content: text });
        messages.push(m);
        open = m;
        return;
      }
      default:
        invalid(`${param}.type`, `modelstub reads ${itemTypes} items, not ${quoteClipped(type)}`);
    }
  });
  return messages;
}
