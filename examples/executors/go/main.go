// Command executor is a small agent executor over modelstub's gRPC ModelService (grpc-go), for
// `modelstub matrix run`. It runs examples/executors/agent.yaml's task: a tool-using loop (the
// model asks for tools, the executor runs them and sends their results, until the model answers
// in text), then a streamed report. It retries UNAVAILABLE, DEADLINE_EXCEEDED and
// RESOURCE_EXHAUSTED (4 attempts, short backoff), gives up at once on any other status, gives
// every call a deadline, and journals each message of the conversation in
// $MODELSTUB_WORKDIR/journal.jsonl so that a restart ($MODELSTUB_RESTART >= 1) resumes without
// asking the model again or re-running a tool whose result is journaled.
// examples/executors/README.md is the contract; the Python and Rust executors do the same,
// request for request. This file is longer than 250 lines because it is one self-contained
// example to copy: the journal, the tools, the retry policy and the loop.
//
// Environment: MODELSTUB_GRPC_ADDR (host:port), MODELSTUB_SESSION, MODELSTUB_WORKDIR,
// MODELSTUB_RESTART (default 0), MODELSTUB_CALL_TIMEOUT_MS (default 5000).
// Exit codes: 0 done, 1 gave up on a status, 2 bad environment or an unexpected reply.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pb "example.com/modelstub-executor/gen/modelstub/v1"
)

const (
	model           = "executor-model"
	system          = "You are a careful agent. Use the tools, then answer."
	task            = "Add 19 and 23, and keep notes."
	reportPrompt    = "Write the report."
	maxAttempts     = 4
	maxTurns        = 16
	retryAfterCapMs = 200
)

var tools = []*pb.Tool{
	{Name: "write_note", Description: "Append a line to notes.txt",
		ParametersJson: `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`},
	{Name: "add", Description: "Add two integers",
		ParametersJson: `{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]}`},
}

var retried = map[codes.Code]bool{codes.Unavailable: true, codes.DeadlineExceeded: true, codes.ResourceExhausted: true}

var roles = map[string]pb.Role{"system": pb.Role_ROLE_SYSTEM, "user": pb.Role_ROLE_USER, "assistant": pb.Role_ROLE_ASSISTANT, "tool": pb.Role_ROLE_TOOL}

var errGaveUp = errors.New("gave up")

func die(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "executor: "+format+"\n", args...)
	os.Exit(2)
}

func env(name, def string) string {
	v := os.Getenv(name)
	if v == "" {
		v = def
	}
	if v == "" {
		die("set %s (examples/executors/README.md)", name)
	}
	return v
}

// jsonCall and jsonMessage are a journal line: the fields that are set, in a fixed order.
type jsonCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}
type jsonMessage struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []jsonCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	Name       string     `json:"name,omitempty"`
}

func toJSON(m *pb.Message) jsonMessage {
	j := jsonMessage{Content: m.GetContent(), ToolCallID: m.GetToolCallId(), Name: m.GetName()}
	for name, r := range roles {
		if r == m.GetRole() {
			j.Role = name
		}
	}
	for _, c := range m.GetToolCalls() {
		j.ToolCalls = append(j.ToolCalls, jsonCall{c.GetId(), c.GetName(), c.GetArguments()})
	}
	return j
}

func fromJSON(j jsonMessage) *pb.Message {
	m := &pb.Message{Role: roles[j.Role], Content: j.Content, ToolCallId: j.ToolCallID, Name: j.Name}
	for _, c := range j.ToolCalls {
		m.ToolCalls = append(m.ToolCalls, &pb.ToolCall{Id: c.ID, Name: c.Name, Arguments: c.Arguments})
	}
	return m
}

// journal is the conversation after the task, one JSON line per message, appended as it grows.
type journal struct {
	messages []*pb.Message
	file     *os.File
}

func openJournal(path string, restart int) *journal {
	j := &journal{}
	if restart > 0 {
		if data, err := os.ReadFile(path); err == nil {
			lines := strings.SplitAfter(string(data), "\n")
			for _, line := range lines {
				if !strings.HasSuffix(line, "\n") {
					break // a line torn by the kill: never acted on
				}
				var m jsonMessage
				if err := json.Unmarshal([]byte(line), &m); err != nil {
					die("journal %s: %v", path, err)
				}
				j.messages = append(j.messages, fromJSON(m))
			}
		}
	}
	flags := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	if restart > 0 {
		flags = os.O_CREATE | os.O_WRONLY | os.O_APPEND
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		die("journal: %v", err)
	}
	j.file = f
	return j
}

func (j *journal) append(m *pb.Message) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(toJSON(m)); err != nil {
		die("journal: %v", err)
	}
	if _, err := j.file.WriteString(b.String()); err != nil {
		die("journal: %v", err)
	}
	if err := j.file.Sync(); err != nil {
		die("journal: %v", err)
	}
	j.messages = append(j.messages, m)
}

func appendLine(path, line string) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		die("%v", err)
	}
	defer f.Close()
	if _, err := f.WriteString(line + "\n"); err != nil {
		die("%v", err)
	}
}

// runTool runs a local tool: deterministic, and each run is a side effect logged in side-effects.log.
func runTool(workdir string, c *pb.ToolCall) string {
	var args struct {
		Text string `json:"text"`
		A, B int64
	}
	if err := json.Unmarshal([]byte(c.GetArguments()), &args); err != nil {
		die("tool %s: arguments %q: %v", c.GetName(), c.GetArguments(), err)
	}
	var result string
	switch c.GetName() {
	case "write_note":
		notes := filepath.Join(workdir, "notes.txt")
		appendLine(notes, args.Text)
		data, err := os.ReadFile(notes)
		if err != nil {
			die("%v", err)
		}
		result = fmt.Sprintf("notes.txt: %d lines", strings.Count(string(data), "\n"))
	case "add":
		result = strconv.FormatInt(args.A+args.B, 10)
	default:
		result = "no tool named " + c.GetName()
	}
	appendLine(filepath.Join(workdir, "side-effects.log"), c.GetId()+" "+c.GetName()+" "+c.GetArguments())
	return result
}

type modelClient struct {
	client  pb.ModelServiceClient
	session string
	timeout time.Duration
}

func (m *modelClient) once(messages []*pb.Message, step string, stream bool, trailer *metadata.MD) (*pb.Message, error) {
	ctx, cancel := context.WithTimeout(context.Background(), m.timeout)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "x-modelstub-session", m.session)
	if !stream {
		r, err := m.client.Generate(ctx, &pb.GenerateRequest{Model: model, Messages: messages, Tools: tools, StepId: step}, grpc.Trailer(trailer))
		return r.GetMessage(), err
	}
	s, err := m.client.GenerateStream(ctx, &pb.GenerateStreamRequest{Model: model, Messages: messages, Tools: tools, StepId: step}, grpc.Trailer(trailer))
	if err != nil {
		return nil, err
	}
	var text strings.Builder
	for {
		frame, err := s.Recv()
		if err == io.EOF {
			return &pb.Message{Role: pb.Role_ROLE_ASSISTANT, Content: text.String()}, nil
		}
		if err != nil {
			return nil, err
		}
		if f, ok := frame.GetFrame().(*pb.GenerateStreamResponse_TextDelta); ok {
			text.WriteString(f.TextDelta)
		}
	}
}

// call is one model call with the retry policy: the same request again, after a short backoff.
func (m *modelClient) call(messages []*pb.Message, step string, stream bool) (*pb.Message, error) {
	for attempt := 1; ; attempt++ {
		var trailer metadata.MD
		reply, err := m.once(messages, step, stream, &trailer)
		if err == nil {
			return reply, nil
		}
		st := status.Convert(err)
		if !retried[st.Code()] || attempt == maxAttempts {
			fmt.Fprintf(os.Stderr, "%s: attempt %d: %s: %s; giving up\n", step, attempt, codeName(st.Code()), st.Message())
			return nil, errGaveUp
		}
		backoff := 10 << (attempt - 1)
		if v := trailer.Get("retry-after-ms"); len(v) > 0 {
			if n, err := strconv.Atoi(v[0]); err == nil {
				backoff = n
			}
		}
		backoff = min(backoff, retryAfterCapMs)
		fmt.Fprintf(os.Stderr, "%s: attempt %d: %s; retrying in %d ms\n", step, attempt, codeName(st.Code()), backoff)
		time.Sleep(time.Duration(backoff) * time.Millisecond)
	}
}

// codeName spells a code as the other executors do (UNAVAILABLE, not Unavailable).
func codeName(c codes.Code) string {
	names := []string{"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
		"PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED",
		"INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"}
	if int(c) < len(names) {
		return names[c]
	}
	return fmt.Sprintf("CODE_%d", c)
}

// run takes the conversation one step further per turn, from wherever the journal left it.
func run(m *modelClient, j *journal, workdir string) (string, error) {
	base := []*pb.Message{{Role: pb.Role_ROLE_SYSTEM, Content: system}, {Role: pb.Role_ROLE_USER, Content: task}}
	for range maxTurns {
		conv := append(append([]*pb.Message{}, base...), j.messages...)
		if len(j.messages) == 0 {
			reply, err := m.call(conv, "plan", false)
			if err != nil {
				return "", err
			}
			j.append(reply)
			continue
		}
		last := j.messages[len(j.messages)-1]
		if last.GetRole() == pb.Role_ROLE_USER { // the report prompt: the last, streamed call
			report, err := m.call(conv, "report", true)
			if err != nil {
				return "", err
			}
			j.append(report)
			return report.GetContent(), nil
		}
		i, sawUser := 0, false
		for k, msg := range j.messages {
			if msg.GetRole() == pb.Role_ROLE_ASSISTANT {
				i = k
			}
			sawUser = sawUser || msg.GetRole() == pb.Role_ROLE_USER
		}
		asked := j.messages[i]
		done := map[string]bool{}
		for _, msg := range j.messages[i+1:] {
			if msg.GetRole() == pb.Role_ROLE_TOOL {
				done[msg.GetToolCallId()] = true
			}
		}
		var pending []*pb.ToolCall
		for _, c := range asked.GetToolCalls() {
			if !done[c.GetId()] {
				pending = append(pending, c)
			}
		}
		switch {
		case len(pending) > 0:
			for _, c := range pending { // a tool whose result is journaled never runs again
				j.append(&pb.Message{Role: pb.Role_ROLE_TOOL, Content: runTool(workdir, c), ToolCallId: c.GetId(), Name: c.GetName()})
			}
		case len(asked.GetToolCalls()) > 0:
			reply, err := m.call(conv, "act", false)
			if err != nil {
				return "", err
			}
			j.append(reply)
		case sawUser:
			return asked.GetContent(), nil // the report is journaled: the task was done already
		default:
			j.append(&pb.Message{Role: pb.Role_ROLE_USER, Content: reportPrompt})
		}
	}
	die("no final answer after %d turns", maxTurns)
	return "", nil
}

func main() {
	addr := env("MODELSTUB_GRPC_ADDR", "")
	session := env("MODELSTUB_SESSION", "")
	workdir := env("MODELSTUB_WORKDIR", "")
	restart, err := strconv.Atoi(env("MODELSTUB_RESTART", "0"))
	if err != nil {
		die("MODELSTUB_RESTART: %v", err)
	}
	timeoutMs, err := strconv.Atoi(env("MODELSTUB_CALL_TIMEOUT_MS", "5000"))
	if err != nil {
		die("MODELSTUB_CALL_TIMEOUT_MS: %v", err)
	}
	if err := os.MkdirAll(workdir, 0o755); err != nil {
		die("%v", err)
	}
	if restart == 0 { // a first run starts the task afresh, whatever an earlier run left
		os.Remove(filepath.Join(workdir, "notes.txt"))
		os.Remove(filepath.Join(workdir, "side-effects.log"))
	}
	j := openJournal(filepath.Join(workdir, "journal.jsonl"), restart)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		die("%v", err)
	}
	defer conn.Close()
	m := &modelClient{client: pb.NewModelServiceClient(conn), session: session, timeout: time.Duration(timeoutMs) * time.Millisecond}
	report, err := run(m, j, workdir)
	if err != nil {
		conn.Close()
		os.Exit(1)
	}
	w := bufio.NewWriter(os.Stdout)
	fmt.Fprintf(w, "report: %s\n", report)
	w.Flush()
}
