"""A small agent executor over modelstub's gRPC ModelService (grpcio), for `modelstub matrix run`.

It runs examples/executors/agent.yaml's task: a tool-using loop (the model asks for tools, the
executor runs them and sends their results, until the model answers in text), then a streamed
report. It retries UNAVAILABLE, DEADLINE_EXCEEDED and RESOURCE_EXHAUSTED (4 attempts, short
backoff), gives up at once on any other status, gives every call a deadline, and journals each
message of the conversation in $MODELSTUB_WORKDIR/journal.jsonl so that a restart
($MODELSTUB_RESTART >= 1) resumes the conversation without asking the model again or re-running
a tool whose result is journaled. examples/executors/README.md is the contract; the Go and Rust
executors beside this one do the same, request for request.

Environment: MODELSTUB_GRPC_ADDR (host:port), MODELSTUB_SESSION, MODELSTUB_WORKDIR,
MODELSTUB_RESTART (default 0), MODELSTUB_CALL_TIMEOUT_MS (default 5000).
Exit codes: 0 done, 1 gave up on a status, 2 bad environment or an unexpected reply.
EXECUTOR_BROKEN=retry-all|no-journal|nondeterministic breaks it on purpose, to see a matrix fail:
it retries every status, or restarts the task from scratch after a crash, or puts the time into
its first request.
Stubs: generated from proto/ by grpc_tools.protoc into ./gen (or a directory on PYTHONPATH).
"""

import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen"))

import grpc  # noqa: E402

from modelstub.v1 import model_pb2, model_pb2_grpc  # noqa: E402

MODEL = "executor-model"
SYSTEM = "You are a careful agent. Use the tools, then answer."
TASK = "Add 19 and 23, and keep notes."
REPORT_PROMPT = "Write the report."
TOOLS = [
    ("write_note", "Append a line to notes.txt",
     '{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}'),
    ("add", "Add two integers",
     '{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]}'),
]
BROKEN = os.environ.get("EXECUTOR_BROKEN", "")
RETRIED = {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.RESOURCE_EXHAUSTED}
MAX_ATTEMPTS = 4
MAX_TURNS = 16
RETRY_AFTER_CAP_MS = 200
ROLES = {"system": model_pb2.ROLE_SYSTEM, "user": model_pb2.ROLE_USER,
         "assistant": model_pb2.ROLE_ASSISTANT, "tool": model_pb2.ROLE_TOOL}
ROLE_NAMES = {v: k for k, v in ROLES.items()}


class GaveUp(Exception):
    pass


def env(name, default=None):
    value = os.environ.get(name, default)
    if value is None or value == "":
        print(f"executor: set {name} (examples/executors/README.md)", file=sys.stderr)
        sys.exit(2)
    return value


def to_json(m):
    """A message as one journal line: the fields that are set, in a fixed order."""
    out = {"role": ROLE_NAMES[m.role], "content": m.content}
    if m.tool_calls:
        out["tool_calls"] = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in m.tool_calls]
    if m.tool_call_id:
        out["tool_call_id"] = m.tool_call_id
    if m.name:
        out["name"] = m.name
    return out


def from_json(j):
    return model_pb2.Message(
        role=ROLES[j["role"]], content=j.get("content", ""),
        tool_calls=[model_pb2.ToolCall(**c) for c in j.get("tool_calls", [])],
        tool_call_id=j.get("tool_call_id", ""), name=j.get("name", ""))


class Journal:
    """The conversation after the task, one JSON line per message, appended as it grows."""

    def __init__(self, path, restart):
        self.messages = []
        if restart > 0 and BROKEN == "no-journal":
            restart = 0  # broken on purpose: the task starts over, and its tools run again
        if restart > 0 and os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                for line in f:
                    if not line.endswith("\n"):
                        break  # a line torn by the kill: never acted on
                    self.messages.append(from_json(json.loads(line)))
        self.file = open(path, "a" if restart > 0 else "w", encoding="utf-8")

    def append(self, m):
        self.file.write(json.dumps(to_json(m), separators=(",", ":"), ensure_ascii=False) + "\n")
        self.file.flush()
        os.fsync(self.file.fileno())
        self.messages.append(m)


def run_tool(workdir, call):
    """The local tools: deterministic, and each run is a side effect logged in side-effects.log."""
    args = json.loads(call.arguments)
    if call.name == "write_note":
        with open(os.path.join(workdir, "notes.txt"), "a", encoding="utf-8") as f:
            f.write(args["text"] + "\n")
        with open(os.path.join(workdir, "notes.txt"), encoding="utf-8") as f:
            result = f"notes.txt: {sum(1 for _ in f)} lines"
    elif call.name == "add":
        result = str(int(args["a"]) + int(args["b"]))
    else:
        result = f"no tool named {call.name}"
    with open(os.path.join(workdir, "side-effects.log"), "a", encoding="utf-8") as f:
        f.write(f"{call.id} {call.name} {call.arguments}\n")
    return result


class Model:
    def __init__(self, addr, session, timeout_s):
        self.stub = model_pb2_grpc.ModelServiceStub(grpc.insecure_channel(addr))
        self.metadata = (("x-modelstub-session", session),)
        self.timeout_s = timeout_s

    def request(self, cls, messages, step):
        tools = [model_pb2.Tool(name=n, description=d, parameters_json=p) for n, d, p in TOOLS]
        return cls(model=MODEL, messages=messages, tools=tools, step_id=step)

    def once(self, messages, step, stream):
        if not stream:
            r = self.stub.Generate(self.request(model_pb2.GenerateRequest, messages, step),
                                   timeout=self.timeout_s, metadata=self.metadata)
            return r.message
        text = ""
        for frame in self.stub.GenerateStream(self.request(model_pb2.GenerateStreamRequest, messages, step),
                                              timeout=self.timeout_s, metadata=self.metadata):
            if frame.WhichOneof("frame") == "text_delta":
                text += frame.text_delta
        return model_pb2.Message(role=model_pb2.ROLE_ASSISTANT, content=text)

    def call(self, messages, step, stream=False):
        """One model call with the retry policy: the same request again, after a short backoff."""
        for attempt in range(1, MAX_ATTEMPTS + 1):
            try:
                return self.once(messages, step, stream)
            except grpc.RpcError as err:
                code = err.code()
                if (code not in RETRIED and BROKEN != "retry-all") or attempt == MAX_ATTEMPTS:
                    print(f"{step}: attempt {attempt}: {code.name}: {err.details()}; giving up", file=sys.stderr)
                    raise GaveUp() from err
                trailers = dict(err.trailing_metadata() or ())
                backoff = min(int(trailers.get("retry-after-ms", 10 * 2 ** (attempt - 1))), RETRY_AFTER_CAP_MS)
                print(f"{step}: attempt {attempt}: {code.name}; retrying in {backoff} ms", file=sys.stderr)
                time.sleep(backoff / 1000)
        raise AssertionError("unreachable")


def run(model, journal, workdir):
    """Takes the conversation one step further per turn, from wherever the journal left it."""
    base = [model_pb2.Message(role=model_pb2.ROLE_SYSTEM, content=SYSTEM),
            model_pb2.Message(role=model_pb2.ROLE_USER, content=TASK + (f" ({time.time_ns()})" if BROKEN == "nondeterministic" else ""))]
    for _ in range(MAX_TURNS):
        conv = base + journal.messages
        last = journal.messages[-1] if journal.messages else None
        if last is None:
            journal.append(model.call(conv, "plan"))
            continue
        if last.role == model_pb2.ROLE_USER:  # the report prompt: the last, streamed call
            report = model.call(conv, "report", stream=True)
            journal.append(report)
            return report.content
        i = max(k for k, m in enumerate(journal.messages) if m.role == model_pb2.ROLE_ASSISTANT)
        asked = journal.messages[i]
        done = {m.tool_call_id for m in journal.messages[i + 1:] if m.role == model_pb2.ROLE_TOOL}
        pending = [c for c in asked.tool_calls if c.id not in done]
        if pending:
            for c in pending:  # a tool whose result is journaled never runs again
                journal.append(model_pb2.Message(role=model_pb2.ROLE_TOOL, content=run_tool(workdir, c),
                                                 tool_call_id=c.id, name=c.name))
        elif asked.tool_calls:
            journal.append(model.call(conv, "act"))
        elif any(m.role == model_pb2.ROLE_USER for m in journal.messages):
            return asked.content  # the report is journaled: the task was done already
        else:
            journal.append(model_pb2.Message(role=model_pb2.ROLE_USER, content=REPORT_PROMPT))
    print(f"executor: no final answer after {MAX_TURNS} turns", file=sys.stderr)
    sys.exit(2)


def main():
    addr = env("MODELSTUB_GRPC_ADDR")
    session = env("MODELSTUB_SESSION")
    workdir = env("MODELSTUB_WORKDIR")
    restart = int(env("MODELSTUB_RESTART", "0"))
    timeout_s = int(env("MODELSTUB_CALL_TIMEOUT_MS", "5000")) / 1000
    os.makedirs(workdir, exist_ok=True)
    if restart == 0:  # a first run starts the task afresh, whatever an earlier run left
        for name in ("notes.txt", "side-effects.log"):
            if os.path.exists(os.path.join(workdir, name)):
                os.remove(os.path.join(workdir, name))
    journal = Journal(os.path.join(workdir, "journal.jsonl"), restart)
    try:
        report = run(Model(addr, session, timeout_s), journal, workdir)
    except GaveUp:
        sys.exit(1)
    print(f"report: {report}", flush=True)


if __name__ == "__main__":
    main()
