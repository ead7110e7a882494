// Command executor is modelstub's Go interop client (grpc-go + protoc-gen-go).
//
//	executor -addr 127.0.0.1:PORT -session NAME -out FILE   runs the interop scenario
//	executor -reencode IN -out OUT                          re-encodes Episode bytes
//
// This file is longer than 250 lines because it is one self-contained interop client per
// language that runs every step of the scenario in order; kept in one file, it reads as the list
// of checks, step by step, beside the Rust and other executors that run the same list.
//
// The scenario is described in test/interop/README.md; every executor runs it identically.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "modelstub.local/interop/gen/modelstub/v1"
)

const (
	model         = "interop-model"
	sessionHeader = "x-modelstub-session"
	// safetyDeadline bounds every call but the "stuck" one, so a broken server cannot hang the suite.
	safetyDeadline  = 20 * time.Second
	stuckDeadline   = 300 * time.Millisecond
	maxAttempts     = 3
	retryAfterCapMs = 200
)

// fail prints what was expected and what came, then exits 1.
func fail(step int, expected string, got any) {
	fmt.Printf("step %d FAILED\n", step)
	fmt.Fprintf(os.Stderr, "step %d: expected %s\n", step, expected)
	fmt.Fprintf(os.Stderr, "step %d: got      %v\n", step, got)
	os.Exit(1)
}

// quote quotes a text the same way in every executor: backslash, quote, \n, \r, \t escaped.
func quote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`, "\t", `\t`)
	return `"` + r.Replace(s) + `"`
}

// codeNames are the canonical status names, so every executor prints them alike.
var codeNames = [...]string{"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
	"NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
	"ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"}

func describe(err error) string {
	s := status.Convert(err)
	name := fmt.Sprintf("CODE_%d", s.Code())
	if int(s.Code()) < len(codeNames) {
		name = codeNames[s.Code()]
	}
	return fmt.Sprintf("%s: %s", name, s.Message())
}

func msg(role pb.Role, content string) *pb.Message {
	return &pb.Message{Role: role, Content: content}
}

func tools() []*pb.Tool {
	return []*pb.Tool{{
		Name:           "bash",
		Description:    "Run a shell command",
		ParametersJson: `{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`,
	}}
}

func sampling() *pb.SamplingParams {
	return &pb.SamplingParams{Temperature: proto.Float64(0), MaxTokens: proto.Uint32(256)}
}

func generateRequest(messages []*pb.Message, stepID string) *pb.GenerateRequest {
	return &pb.GenerateRequest{
		Model:    model,
		Messages: append([]*pb.Message(nil), messages...),
		Tools:    tools(),
		Sampling: sampling(),
		StepId:   stepID,
	}
}

func streamRequest(messages []*pb.Message, stepID string) *pb.GenerateStreamRequest {
	return &pb.GenerateStreamRequest{
		Model:    model,
		Messages: append([]*pb.Message(nil), messages...),
		Tools:    tools(),
		Sampling: sampling(),
		StepId:   stepID,
	}
}

func reencode(in, out string) {
	data, err := os.ReadFile(in)
	if err != nil {
		fail(0, "a readable input file", err)
	}
	var episode pb.Episode
	if err := proto.Unmarshal(data, &episode); err != nil {
		fail(0, "modelstub.v1.Episode bytes", err)
	}
	encoded, err := proto.MarshalOptions{Deterministic: true}.Marshal(&episode)
	if err != nil {
		fail(0, "an encodable Episode", err)
	}
	if err := os.WriteFile(out, encoded, 0o644); err != nil {
		fail(0, "a writable output file", err)
	}
}

func scenario(addr, session, out string) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fail(0, "a valid -addr HOST:PORT", err)
	}
	defer conn.Close()
	modelClient := pb.NewModelServiceClient(conn)
	control := pb.NewControlServiceClient(conn)

	call := func(deadline time.Duration) (context.Context, context.CancelFunc) {
		ctx := metadata.AppendToOutgoingContext(context.Background(), sessionHeader, session)
		return context.WithTimeout(ctx, deadline)
	}

	conversation := []*pb.Message{
		msg(pb.Role_ROLE_SYSTEM, "You are a test agent."),
		msg(pb.Role_ROLE_USER, "List the files in /tmp"),
	}

	// Step 1: a tool call.
	ctx, cancel := call(safetyDeadline)
	resp, err := modelClient.Generate(ctx, generateRequest(conversation, "plan"))
	cancel()
	if err != nil {
		fail(1, "OK", describe(err))
	}
	calls := resp.GetMessage().GetToolCalls()
	if len(calls) == 0 || calls[0].GetName() != "bash" {
		fail(1, `message.tool_calls[0] with name "bash"`, resp)
	}
	toolCall := calls[0]
	fmt.Printf("step 1 ok: tool call %s %s id=%s\n", toolCall.GetName(), toolCall.GetArguments(), toolCall.GetId())

	// Step 2: the tool's result, then a text reply.
	conversation = append(conversation,
		&pb.Message{
			Role:      pb.Role_ROLE_ASSISTANT,
			Content:   "",
			ToolCalls: []*pb.ToolCall{{Id: toolCall.GetId(), Name: toolCall.GetName(), Arguments: toolCall.GetArguments()}},
		},
		&pb.Message{Role: pb.Role_ROLE_TOOL, Content: "a.txt\nb.txt", ToolCallId: toolCall.GetId()},
	)
	ctx, cancel = call(safetyDeadline)
	resp, err = modelClient.Generate(ctx, generateRequest(conversation, "plan"))
	cancel()
	if err != nil {
		fail(2, "OK", describe(err))
	}
	if resp.GetMessage().GetContent() == "" || len(resp.GetMessage().GetToolCalls()) != 0 {
		fail(2, "a text reply with no tool calls", resp)
	}
	text := resp.GetMessage().GetContent()
	fmt.Printf("step 2 ok: text %s\n", quote(text))
	conversation = append(conversation, msg(pb.Role_ROLE_ASSISTANT, text))

	// Step 3: a streamed summary.
	conversation = append(conversation, msg(pb.Role_ROLE_USER, "Summarize"))
	ctx, cancel = call(safetyDeadline)
	stream, err := modelClient.GenerateStream(ctx, streamRequest(conversation, "summarize"))
	if err != nil {
		fail(3, "OK", describe(err))
	}
	var sb strings.Builder
	deltas := 0
	var final *pb.StreamFinal
	for {
		frame, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			fail(3, "the stream to end OK", describe(err))
		}
		if final != nil {
			fail(3, "the final frame last", fmt.Sprintf("a frame after it: %v", frame))
		}
		switch f := frame.GetFrame().(type) {
		case *pb.GenerateStreamResponse_TextDelta:
			deltas++
			sb.WriteString(f.TextDelta)
		case *pb.GenerateStreamResponse_Final:
			final = f.Final
		default:
			fail(3, "text_delta or final frames", frame)
		}
	}
	cancel()
	if final == nil {
		fail(3, "a final frame", "the stream ended without one")
	}
	if final.GetUsage() == nil {
		fail(3, "usage in the final frame", final)
	}
	text = sb.String()
	if text == "" {
		fail(3, "text deltas", "no text")
	}
	u := final.GetUsage()
	fmt.Printf("step 3 ok: stream %d text deltas %s final %s usage %d/%d/%d\n",
		deltas, quote(text), final.GetFinishReason(), u.GetInputTokens(), u.GetOutputTokens(), u.GetTotalTokens())
	conversation = append(conversation, msg(pb.Role_ROLE_ASSISTANT, text))

	// Step 4: UNAVAILABLE twice, then success.
	attempt := 0
	for {
		attempt++
		var trailer metadata.MD
		ctx, cancel = call(safetyDeadline)
		resp, err = modelClient.Generate(ctx, generateRequest(conversation, "flaky"), grpc.Trailer(&trailer))
		cancel()
		if err == nil {
			break
		}
		if status.Code(err) != codes.Unavailable || attempt >= maxAttempts {
			fail(4, fmt.Sprintf("UNAVAILABLE then success on attempt %d", maxAttempts),
				fmt.Sprintf("attempt %d: %s", attempt, describe(err)))
		}
		if v := trailer.Get("retry-after-ms"); len(v) > 0 {
			if ms, perr := strconv.ParseUint(strings.TrimSpace(v[0]), 10, 64); perr == nil && ms > 0 {
				time.Sleep(time.Duration(min(ms, retryAfterCapMs)) * time.Millisecond)
			}
		}
	}
	if attempt != maxAttempts {
		fail(4, fmt.Sprintf("success on attempt %d", maxAttempts), fmt.Sprintf("success on attempt %d", attempt))
	}
	fmt.Printf("step 4 ok: attempt %d succeeded after %d UNAVAILABLE, text %s\n",
		attempt, attempt-1, quote(resp.GetMessage().GetContent()))

	// Step 5: the caller's deadline cuts the call off.
	ctx, cancel = call(stuckDeadline)
	resp, err = modelClient.Generate(ctx, generateRequest(conversation, "stuck"))
	cancel()
	if err == nil {
		fail(5, "DEADLINE_EXCEEDED", fmt.Sprintf("OK %v", resp))
	}
	if status.Code(err) != codes.DeadlineExceeded {
		fail(5, "DEADLINE_EXCEEDED", describe(err))
	}
	fmt.Println("step 5 ok: DEADLINE_EXCEEDED")

	// Step 6: the episode's bytes.
	ctx, cancel = call(safetyDeadline)
	ep, err := control.GetEpisode(ctx, &pb.GetEpisodeRequest{Session: session})
	cancel()
	if err != nil {
		fail(6, "OK", describe(err))
	}
	if len(ep.GetEpisodeBinpb()) == 0 {
		fail(6, "episode_binpb bytes", "none")
	}
	if err := os.WriteFile(out, ep.GetEpisodeBinpb(), 0o644); err != nil {
		fail(6, "a writable -out file", err)
	}
	fmt.Printf("step 6 ok: episode %d calls, %d bytes written to %s\n",
		len(ep.GetEpisode().GetCalls()), len(ep.GetEpisodeBinpb()), out)
}

func main() {
	addr := flag.String("addr", "", "server address, HOST:PORT")
	session := flag.String("session", "", "session name, sent as x-modelstub-session")
	out := flag.String("out", "", "file for the episode bytes (or the re-encoded bytes)")
	in := flag.String("reencode", "", "re-encode the Episode bytes in this file to -out")
	flag.Parse()
	switch {
	case *in != "" && *out != "":
		reencode(*in, *out)
	case *addr != "" && *session != "" && *out != "":
		scenario(*addr, *session, *out)
	default:
		flag.Usage()
		os.Exit(2)
	}
}
