//! modelstub interop executor (Rust, tonic + prost).
//!
//! `executor -addr 127.0.0.1:PORT -session NAME -out FILE` runs the interop scenario
//! (see test/interop/README.md) and writes the session's Episode bytes to FILE.
//! `executor -reencode IN -out OUT` decodes Episode bytes and encodes them again with prost.
//!
//! This file is longer than 250 lines because it is one self-contained interop client per
//! language that runs every step of the scenario in order; kept in one file, it reads as the
//! list of checks, step by step, beside the Go and other executors that run the same list.

use std::process::exit;
use std::time::Duration;

use prost::Message as _;
use tonic::metadata::MetadataValue;
use tonic::transport::{Channel, Endpoint};
use tonic::{Code, Request, Status};

pub mod pb {
    tonic::include_proto!("modelstub.v1");
}

use pb::control_service_client::ControlServiceClient;
use pb::generate_stream_response::Frame;
use pb::model_service_client::ModelServiceClient;
use pb::{
    Episode, GenerateRequest, GenerateStreamRequest, GetEpisodeRequest, Message, Role,
    SamplingParams, Tool, ToolCall,
};

const MODEL: &str = "interop-model";
const SESSION_HEADER: &str = "x-modelstub-session";
/// Deadline for every call but the "stuck" one, so a broken server cannot hang the suite.
const SAFETY_DEADLINE: Duration = Duration::from_secs(20);
const STUCK_DEADLINE: Duration = Duration::from_millis(300);
const MAX_ATTEMPTS: u32 = 3;
const RETRY_AFTER_CAP_MS: u64 = 200;

struct Args {
    addr: Option<String>,
    session: Option<String>,
    out: Option<String>,
    reencode: Option<String>,
}

fn usage() -> ! {
    eprintln!("usage: executor -addr HOST:PORT -session NAME -out FILE");
    eprintln!("       executor -reencode IN -out OUT");
    exit(2);
}

fn parse_args() -> Args {
    let mut args = Args {
        addr: None,
        session: None,
        out: None,
        reencode: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let flag = arg.trim_start_matches('-').to_string();
        if flag == arg {
            usage();
        }
        let (name, value) = match flag.split_once('=') {
            Some((n, v)) => (n.to_string(), v.to_string()),
            None => (flag, it.next().unwrap_or_else(|| usage())),
        };
        match name.as_str() {
            "addr" => args.addr = Some(value),
            "session" => args.session = Some(value),
            "out" => args.out = Some(value),
            "reencode" => args.reencode = Some(value),
            _ => usage(),
        }
    }
    args
}

/// Prints what was expected and what came, then exits 1.
fn fail(step: u32, expected: &str, got: impl std::fmt::Display) -> ! {
    println!("step {step} FAILED");
    eprintln!("step {step}: expected {expected}");
    eprintln!("step {step}: got      {got}");
    exit(1);
}

/// Quotes a text the same way in every executor: backslash, quote, \n, \r, \t escaped.
fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            _ => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The canonical status names, so every executor prints them alike.
const CODE_NAMES: [&str; 17] = [
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

fn describe(status: &Status) -> String {
    let code = status.code() as usize;
    let name = CODE_NAMES
        .get(code)
        .map(|s| s.to_string())
        .unwrap_or_else(|| format!("CODE_{code}"));
    format!("{name}: {}", status.message())
}

/// tonic enforces the deadline on the client too and reports its own expiry as CANCELLED
/// "Timeout expired"; grpc-go and grpc-python call that DEADLINE_EXCEEDED. Align with them.
fn code_of(status: &Status) -> Code {
    if status.code() == Code::Cancelled && status.message() == "Timeout expired" {
        Code::DeadlineExceeded
    } else {
        status.code()
    }
}

fn msg(role: Role, content: &str) -> Message {
    Message {
        role: role as i32,
        content: content.to_string(),
        ..Default::default()
    }
}

fn tools() -> Vec<Tool> {
    vec![Tool {
        name: "bash".to_string(),
        description: "Run a shell command".to_string(),
        parameters_json:
            r#"{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}"#
                .to_string(),
    }]
}

fn sampling() -> Option<SamplingParams> {
    Some(SamplingParams {
        temperature: Some(0.0),
        max_tokens: Some(256),
        ..Default::default()
    })
}

fn generate_request(messages: &[Message], step_id: &str) -> GenerateRequest {
    GenerateRequest {
        model: MODEL.to_string(),
        messages: messages.to_vec(),
        tools: tools(),
        sampling: sampling(),
        step_id: step_id.to_string(),
    }
}

fn stream_request(messages: &[Message], step_id: &str) -> GenerateStreamRequest {
    GenerateStreamRequest {
        model: MODEL.to_string(),
        messages: messages.to_vec(),
        tools: tools(),
        sampling: sampling(),
        step_id: step_id.to_string(),
    }
}

fn with_session<T>(body: T, session: &str, deadline: Duration) -> Request<T> {
    let mut req = Request::new(body);
    let value: MetadataValue<_> = session
        .parse()
        .unwrap_or_else(|_| fail(0, "a session name valid as metadata", session));
    req.metadata_mut().insert(SESSION_HEADER, value);
    req.set_timeout(deadline);
    req
}

fn reencode(input: &str, output: &str) {
    let bytes = std::fs::read(input).unwrap_or_else(|e| fail(0, "a readable input file", e));
    let episode = Episode::decode(bytes.as_slice())
        .unwrap_or_else(|e| fail(0, "modelstub.v1.Episode bytes", e));
    std::fs::write(output, episode.encode_to_vec())
        .unwrap_or_else(|e| fail(0, "a writable output file", e));
}

async fn scenario(addr: &str, session: &str, out: &str) {
    let endpoint = Endpoint::from_shared(format!("http://{addr}"))
        .unwrap_or_else(|e| fail(0, "a valid -addr HOST:PORT", e));
    let channel: Channel = endpoint
        .connect()
        .await
        .unwrap_or_else(|e| fail(0, &format!("a server listening on {addr}"), e));
    let mut model = ModelServiceClient::new(channel.clone());
    let mut control = ControlServiceClient::new(channel);

    let mut conversation = vec![
        msg(Role::System, "You are a test agent."),
        msg(Role::User, "List the files in /tmp"),
    ];

    // Step 1: a tool call.
    let resp = model
        .generate(with_session(
            generate_request(&conversation, "plan"),
            session,
            SAFETY_DEADLINE,
        ))
        .await
        .unwrap_or_else(|s| fail(1, "OK", describe(&s)))
        .into_inner();
    let call: ToolCall = match resp.message.as_ref().and_then(|m| m.tool_calls.first()) {
        Some(c) if c.name == "bash" => c.clone(),
        _ => fail(
            1,
            "message.tool_calls[0] with name \"bash\"",
            format!("{resp:?}"),
        ),
    };
    println!(
        "step 1 ok: tool call {} {} id={}",
        call.name, call.arguments, call.id
    );

    // Step 2: the tool's result, then a text reply.
    conversation.push(Message {
        role: Role::Assistant as i32,
        content: String::new(),
        tool_calls: vec![call.clone()],
        ..Default::default()
    });
    conversation.push(Message {
        role: Role::Tool as i32,
        content: "a.txt\nb.txt".to_string(),
        tool_call_id: call.id.clone(),
        ..Default::default()
    });
    let resp = model
        .generate(with_session(
            generate_request(&conversation, "plan"),
            session,
            SAFETY_DEADLINE,
        ))
        .await
        .unwrap_or_else(|s| fail(2, "OK", describe(&s)))
        .into_inner();
    let text = match resp.message.as_ref() {
        Some(m) if !m.content.is_empty() && m.tool_calls.is_empty() => m.content.clone(),
        _ => fail(2, "a text reply with no tool calls", format!("{resp:?}")),
    };
    println!("step 2 ok: text {}", quote(&text));
    conversation.push(msg(Role::Assistant, &text));

    // Step 3: a streamed summary.
    conversation.push(msg(Role::User, "Summarize"));
    let mut stream = model
        .generate_stream(with_session(
            stream_request(&conversation, "summarize"),
            session,
            SAFETY_DEADLINE,
        ))
        .await
        .unwrap_or_else(|s| fail(3, "OK", describe(&s)))
        .into_inner();
    let mut text = String::new();
    let mut deltas = 0u32;
    let mut fin = None;
    loop {
        let frame = match stream.message().await {
            Ok(Some(f)) => f,
            Ok(None) => break,
            Err(s) => fail(3, "the stream to end OK", describe(&s)),
        };
        if fin.is_some() {
            fail(
                3,
                "the final frame last",
                format!("a frame after it: {frame:?}"),
            );
        }
        match frame.frame {
            Some(Frame::TextDelta(d)) => {
                deltas += 1;
                text.push_str(&d);
            }
            Some(Frame::Final(f)) => fin = Some(f),
            other => fail(3, "text_delta or final frames", format!("{other:?}")),
        }
    }
    let fin = fin.unwrap_or_else(|| fail(3, "a final frame", "the stream ended without one"));
    let usage = fin
        .usage
        .unwrap_or_else(|| fail(3, "usage in the final frame", format!("{fin:?}")));
    if text.is_empty() {
        fail(3, "text deltas", "no text");
    }
    let finish = pb::FinishReason::try_from(fin.finish_reason)
        .map(|r| r.as_str_name().to_string())
        .unwrap_or_else(|_| fin.finish_reason.to_string());
    println!(
        "step 3 ok: stream {} text deltas {} final {} usage {}/{}/{}",
        deltas,
        quote(&text),
        finish,
        usage.input_tokens,
        usage.output_tokens,
        usage.total_tokens
    );
    conversation.push(msg(Role::Assistant, &text));

    // Step 4: UNAVAILABLE twice, then success.
    let mut attempt = 0;
    let resp = loop {
        attempt += 1;
        let result = model
            .generate(with_session(
                generate_request(&conversation, "flaky"),
                session,
                SAFETY_DEADLINE,
            ))
            .await;
        match result {
            Ok(r) => break r.into_inner(),
            Err(s) if code_of(&s) == Code::Unavailable && attempt < MAX_ATTEMPTS => {
                let wait = s
                    .metadata()
                    .get("retry-after-ms")
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.trim().parse::<u64>().ok())
                    .unwrap_or(0)
                    .min(RETRY_AFTER_CAP_MS);
                if wait > 0 {
                    tokio::time::sleep(Duration::from_millis(wait)).await;
                }
            }
            Err(s) => fail(
                4,
                &format!("UNAVAILABLE then success on attempt {MAX_ATTEMPTS}"),
                format!("attempt {attempt}: {}", describe(&s)),
            ),
        }
    };
    if attempt != MAX_ATTEMPTS {
        fail(
            4,
            &format!("success on attempt {MAX_ATTEMPTS}"),
            format!("success on attempt {attempt}"),
        );
    }
    let text = resp.message.map(|m| m.content).unwrap_or_default();
    println!(
        "step 4 ok: attempt {attempt} succeeded after {} UNAVAILABLE, text {}",
        attempt - 1,
        quote(&text)
    );

    // Step 5: the caller's deadline cuts the call off.
    let result = model
        .generate(with_session(
            generate_request(&conversation, "stuck"),
            session,
            STUCK_DEADLINE,
        ))
        .await;
    match result {
        Err(s) if code_of(&s) == Code::DeadlineExceeded => {}
        Err(s) => fail(5, "DEADLINE_EXCEEDED", describe(&s)),
        Ok(r) => fail(5, "DEADLINE_EXCEEDED", format!("OK {:?}", r.into_inner())),
    }
    println!("step 5 ok: DEADLINE_EXCEEDED");

    // Step 6: the episode's bytes.
    let resp = control
        .get_episode(with_session(
            // Fields added later to the request keep their defaults (here: the decoded episode too).
            GetEpisodeRequest {
                session: session.to_string(),
                ..Default::default()
            },
            session,
            SAFETY_DEADLINE,
        ))
        .await
        .unwrap_or_else(|s| fail(6, "OK", describe(&s)))
        .into_inner();
    if resp.episode_binpb.is_empty() {
        fail(6, "episode_binpb bytes", "none");
    }
    std::fs::write(out, &resp.episode_binpb).unwrap_or_else(|e| fail(6, "a writable -out file", e));
    let calls = resp.episode.map(|e| e.calls.len()).unwrap_or(0);
    println!(
        "step 6 ok: episode {} calls, {} bytes written to {}",
        calls,
        resp.episode_binpb.len(),
        out
    );
}

fn main() {
    let args = parse_args();
    if let Some(input) = args.reencode.as_deref() {
        let out = args.out.as_deref().unwrap_or_else(|| usage());
        reencode(input, out);
        return;
    }
    let (Some(addr), Some(session), Some(out)) = (args.addr, args.session, args.out) else {
        usage();
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| fail(0, "a tokio runtime", e));
    rt.block_on(scenario(&addr, &session, &out));
}
