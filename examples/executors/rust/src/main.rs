//! A small agent executor over modelstub's gRPC ModelService (tonic + prost), for
//! `modelstub matrix run`. It runs examples/executors/agent.yaml's task: a tool-using loop (the
//! model asks for tools, the executor runs them and sends their results, until the model answers
//! in text), then a streamed report. It retries UNAVAILABLE, DEADLINE_EXCEEDED and
//! RESOURCE_EXHAUSTED (4 attempts, short backoff), gives up at once on any other status, gives
//! every call a deadline, and journals each message of the conversation in
//! $MODELSTUB_WORKDIR/journal.jsonl so that a restart ($MODELSTUB_RESTART >= 1) resumes without
//! asking the model again or re-running a tool whose result is journaled.
//! examples/executors/README.md is the contract; the Python and Go executors do the same,
//! request for request. This file is longer than 250 lines because it is one self-contained
//! example to copy: the journal, the tools, the retry policy and the loop.
//!
//! Environment: MODELSTUB_GRPC_ADDR (host:port), MODELSTUB_SESSION, MODELSTUB_WORKDIR,
//! MODELSTUB_RESTART (default 0), MODELSTUB_CALL_TIMEOUT_MS (default 5000).
//! Exit codes: 0 done, 1 gave up on a status, 2 bad environment or an unexpected reply.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::exit;
use std::time::Duration;

use serde_json::Value;
use tonic::metadata::MetadataValue;
use tonic::transport::Endpoint;
use tonic::{Code, Request, Status};

pub mod pb {
    tonic::include_proto!("modelstub.v1");
}

use pb::generate_stream_response::Frame;
use pb::model_service_client::ModelServiceClient;
use pb::{GenerateRequest, GenerateStreamRequest, Message, Role, Tool, ToolCall};

const MODEL: &str = "executor-model";
const SYSTEM: &str = "You are a careful agent. Use the tools, then answer.";
const TASK: &str = "Add 19 and 23, and keep notes.";
const REPORT_PROMPT: &str = "Write the report.";
const MAX_ATTEMPTS: u32 = 4;
const MAX_TURNS: usize = 16;
const RETRY_AFTER_CAP_MS: u64 = 200;
const RETRIED: [Code; 3] = [
    Code::Unavailable,
    Code::DeadlineExceeded,
    Code::ResourceExhausted,
];
const ROLES: [(&str, Role); 4] = [
    ("system", Role::System),
    ("user", Role::User),
    ("assistant", Role::Assistant),
    ("tool", Role::Tool),
];

struct GaveUp;

fn die(message: impl std::fmt::Display) -> ! {
    eprintln!("executor: {message}");
    exit(2);
}

fn env(name: &str, default: Option<&str>) -> String {
    match std::env::var(name) {
        Ok(v) if !v.is_empty() => v,
        _ => default
            .map(str::to_string)
            .unwrap_or_else(|| die(format!("set {name} (examples/executors/README.md)"))),
    }
}

fn tools() -> Vec<Tool> {
    let tool = |name: &str, description: &str, parameters: &str| Tool {
        name: name.into(),
        description: description.into(),
        parameters_json: parameters.into(),
    };
    vec![
        tool(
            "write_note",
            "Append a line to notes.txt",
            r#"{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}"#,
        ),
        tool(
            "add",
            "Add two integers",
            r#"{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]}"#,
        ),
    ]
}

fn msg(role: Role, content: &str) -> Message {
    Message {
        role: role as i32,
        content: content.into(),
        ..Default::default()
    }
}

fn quoted(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

/// A message as one journal line: the fields that are set, in a fixed order.
fn to_json(m: &Message) -> String {
    let role = ROLES
        .iter()
        .find(|(_, r)| *r as i32 == m.role)
        .map_or("unknown", |(n, _)| n);
    let mut out = format!(
        "{{\"role\":{},\"content\":{}",
        quoted(role),
        quoted(&m.content)
    );
    if !m.tool_calls.is_empty() {
        let calls: Vec<String> = m
            .tool_calls
            .iter()
            .map(|c| {
                format!(
                    "{{\"id\":{},\"name\":{},\"arguments\":{}}}",
                    quoted(&c.id),
                    quoted(&c.name),
                    quoted(&c.arguments)
                )
            })
            .collect();
        out += &format!(",\"tool_calls\":[{}]", calls.join(","));
    }
    if !m.tool_call_id.is_empty() {
        out += &format!(",\"tool_call_id\":{}", quoted(&m.tool_call_id));
    }
    if !m.name.is_empty() {
        out += &format!(",\"name\":{}", quoted(&m.name));
    }
    out + "}"
}

fn from_json(line: &str) -> Message {
    let v: Value = serde_json::from_str(line).unwrap_or_else(|e| die(format!("journal: {e}")));
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).unwrap_or("").to_string();
    let role = text(&v, "role");
    Message {
        role: ROLES
            .iter()
            .find(|(n, _)| *n == role)
            .map_or(0, |(_, r)| *r as i32),
        content: text(&v, "content"),
        tool_calls: v
            .get("tool_calls")
            .and_then(Value::as_array)
            .map(|calls| {
                calls
                    .iter()
                    .map(|c| ToolCall {
                        id: text(c, "id"),
                        name: text(c, "name"),
                        arguments: text(c, "arguments"),
                    })
                    .collect()
            })
            .unwrap_or_default(),
        tool_call_id: text(&v, "tool_call_id"),
        name: text(&v, "name"),
    }
}

/// The conversation after the task, one JSON line per message, appended as it grows.
struct Journal {
    messages: Vec<Message>,
    file: File,
}

impl Journal {
    fn open(path: &Path, restart: u32) -> Journal {
        let mut messages = Vec::new();
        if restart > 0 {
            if let Ok(data) = fs::read_to_string(path) {
                // A last line without its newline was torn by the kill: never acted on.
                for line in data.split_inclusive('\n').filter(|l| l.ends_with('\n')) {
                    messages.push(from_json(line));
                }
            }
        }
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .append(restart > 0)
            .truncate(restart == 0)
            .open(path)
            .unwrap_or_else(|e| die(format!("journal: {e}")));
        Journal { messages, file }
    }

    fn append(&mut self, m: Message) {
        let line = to_json(&m) + "\n";
        self.file
            .write_all(line.as_bytes())
            .and_then(|_| self.file.sync_data())
            .unwrap_or_else(|e| die(format!("journal: {e}")));
        self.messages.push(m);
    }
}

fn append_line(path: &Path, line: &str) {
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(format!("{line}\n").as_bytes()))
        .unwrap_or_else(|e| die(format!("{}: {e}", path.display())));
}

/// The local tools: deterministic, and each run is a side effect logged in side-effects.log.
fn run_tool(workdir: &Path, c: &ToolCall) -> String {
    let args: Value = serde_json::from_str(&c.arguments)
        .unwrap_or_else(|e| die(format!("tool {}: arguments {}: {e}", c.name, c.arguments)));
    let result = match c.name.as_str() {
        "write_note" => {
            let notes = workdir.join("notes.txt");
            append_line(
                &notes,
                args.get("text").and_then(Value::as_str).unwrap_or(""),
            );
            let lines = fs::read_to_string(&notes)
                .unwrap_or_default()
                .matches('\n')
                .count();
            format!("notes.txt: {lines} lines")
        }
        "add" => {
            let n = |k: &str| args.get(k).and_then(Value::as_i64).unwrap_or(0);
            (n("a") + n("b")).to_string()
        }
        other => format!("no tool named {other}"),
    };
    append_line(
        &workdir.join("side-effects.log"),
        &format!("{} {} {}", c.id, c.name, c.arguments),
    );
    result
}

/// tonic enforces the deadline on the client too and reports its own expiry as CANCELLED
/// "Timeout expired"; grpc-go and grpcio call that DEADLINE_EXCEEDED. Align with them.
fn code_of(status: &Status) -> Code {
    if status.code() == Code::Cancelled && status.message() == "Timeout expired" {
        Code::DeadlineExceeded
    } else {
        status.code()
    }
}

fn code_name(code: Code) -> String {
    let names = [
        "OK",
        "CANCELLED",
        "UNKNOWN",
        "INVALID_ARGUMENT",
        "DEADLINE_EXCEEDED",
        "NOT_FOUND",
        "ALREADY_EXISTS",
        "PERMISSION_DENIED",
        "RESOURCE_EXHAUSTED",
        "FAILED_PRECONDITION",
        "ABORTED",
        "OUT_OF_RANGE",
        "UNIMPLEMENTED",
        "INTERNAL",
        "UNAVAILABLE",
        "DATA_LOSS",
        "UNAUTHENTICATED",
    ];
    names
        .get(code as usize)
        .map_or_else(|| format!("CODE_{}", code as i32), |s| s.to_string())
}

struct Model {
    client: ModelServiceClient<tonic::transport::Channel>,
    session: MetadataValue<tonic::metadata::Ascii>,
    timeout: Duration,
}

impl Model {
    fn request<T>(&self, body: T) -> Request<T> {
        let mut req = Request::new(body);
        req.metadata_mut()
            .insert("x-modelstub-session", self.session.clone());
        req.set_timeout(self.timeout);
        req
    }

    async fn once(
        &mut self,
        messages: &[Message],
        step: &str,
        stream: bool,
    ) -> Result<Message, Status> {
        if !stream {
            let body = GenerateRequest {
                model: MODEL.into(),
                messages: messages.to_vec(),
                tools: tools(),
                step_id: step.into(),
                ..Default::default()
            };
            let req = self.request(body);
            let reply = self.client.generate(req).await?.into_inner();
            return Ok(reply.message.unwrap_or_default());
        }
        let body = GenerateStreamRequest {
            model: MODEL.into(),
            messages: messages.to_vec(),
            tools: tools(),
            step_id: step.into(),
            ..Default::default()
        };
        let req = self.request(body);
        let mut frames = self.client.generate_stream(req).await?.into_inner();
        let mut text = String::new();
        while let Some(frame) = frames.message().await? {
            if let Some(Frame::TextDelta(d)) = frame.frame {
                text.push_str(&d);
            }
        }
        Ok(msg(Role::Assistant, &text))
    }

    /// One model call with the retry policy: the same request again, after a short backoff.
    async fn call(
        &mut self,
        messages: &[Message],
        step: &str,
        stream: bool,
    ) -> Result<Message, GaveUp> {
        for attempt in 1..=MAX_ATTEMPTS {
            let status = match self.once(messages, step, stream).await {
                Ok(reply) => return Ok(reply),
                Err(status) => status,
            };
            let code = code_of(&status);
            if !RETRIED.contains(&code) || attempt == MAX_ATTEMPTS {
                eprintln!(
                    "{step}: attempt {attempt}: {}: {}; giving up",
                    code_name(code),
                    status.message()
                );
                return Err(GaveUp);
            }
            let backoff = status
                .metadata()
                .get("retry-after-ms")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(10 << (attempt - 1))
                .min(RETRY_AFTER_CAP_MS);
            eprintln!(
                "{step}: attempt {attempt}: {}; retrying in {backoff} ms",
                code_name(code)
            );
            tokio::time::sleep(Duration::from_millis(backoff)).await;
        }
        Err(GaveUp)
    }
}

/// Takes the conversation one step further per turn, from wherever the journal left it.
async fn run(model: &mut Model, journal: &mut Journal, workdir: &Path) -> Result<String, GaveUp> {
    let base = vec![msg(Role::System, SYSTEM), msg(Role::User, TASK)];
    for _ in 0..MAX_TURNS {
        let conv: Vec<Message> = base
            .iter()
            .chain(journal.messages.iter())
            .cloned()
            .collect();
        let Some(last) = journal.messages.last() else {
            let reply = model.call(&conv, "plan", false).await?;
            journal.append(reply);
            continue;
        };
        if last.role == Role::User as i32 {
            // The report prompt: the last, streamed call.
            let report = model.call(&conv, "report", true).await?;
            let content = report.content.clone();
            journal.append(report);
            return Ok(content);
        }
        let i = journal
            .messages
            .iter()
            .rposition(|m| m.role == Role::Assistant as i32)
            .unwrap_or(0);
        let asked = journal.messages[i].clone();
        let done: Vec<&str> = journal.messages[i + 1..]
            .iter()
            .filter(|m| m.role == Role::Tool as i32)
            .map(|m| m.tool_call_id.as_str())
            .collect();
        let pending: Vec<ToolCall> = asked
            .tool_calls
            .iter()
            .filter(|c| !done.contains(&c.id.as_str()))
            .cloned()
            .collect();
        let saw_user = journal.messages.iter().any(|m| m.role == Role::User as i32);
        if !pending.is_empty() {
            for c in pending {
                // A tool whose result is journaled never runs again.
                let result = run_tool(workdir, &c);
                journal.append(Message {
                    role: Role::Tool as i32,
                    content: result,
                    tool_call_id: c.id,
                    name: c.name,
                    ..Default::default()
                });
            }
        } else if !asked.tool_calls.is_empty() {
            let reply = model.call(&conv, "act", false).await?;
            journal.append(reply);
        } else if saw_user {
            return Ok(asked.content); // the report is journaled: the task was done already
        } else {
            journal.append(msg(Role::User, REPORT_PROMPT));
        }
    }
    die(format!("no final answer after {MAX_TURNS} turns"))
}

fn main() {
    let addr = env("MODELSTUB_GRPC_ADDR", None);
    let session = env("MODELSTUB_SESSION", None);
    let workdir = PathBuf::from(env("MODELSTUB_WORKDIR", None));
    let restart: u32 = env("MODELSTUB_RESTART", Some("0"))
        .parse()
        .unwrap_or_else(|e| die(format!("MODELSTUB_RESTART: {e}")));
    let timeout_ms: u64 = env("MODELSTUB_CALL_TIMEOUT_MS", Some("5000"))
        .parse()
        .unwrap_or_else(|e| die(format!("MODELSTUB_CALL_TIMEOUT_MS: {e}")));
    fs::create_dir_all(&workdir).unwrap_or_else(|e| die(format!("{}: {e}", workdir.display())));
    if restart == 0 {
        // A first run starts the task afresh, whatever an earlier run left.
        let _ = fs::remove_file(workdir.join("notes.txt"));
        let _ = fs::remove_file(workdir.join("side-effects.log"));
    }
    let mut journal = Journal::open(&workdir.join("journal.jsonl"), restart);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| die(e));
    let result = rt.block_on(async {
        let channel = Endpoint::from_shared(format!("http://{addr}"))
            .unwrap_or_else(|e| die(format!("MODELSTUB_GRPC_ADDR: {e}")))
            .connect_lazy();
        let session = session.parse().unwrap_or_else(|_| {
            die(format!(
                "MODELSTUB_SESSION {session:?} is not valid metadata"
            ))
        });
        let mut model = Model {
            client: ModelServiceClient::new(channel),
            session,
            timeout: Duration::from_millis(timeout_ms),
        };
        run(&mut model, &mut journal, &workdir).await
    });
    match result {
        Ok(report) => println!("report: {report}"),
        Err(GaveUp) => exit(1),
    }
}
