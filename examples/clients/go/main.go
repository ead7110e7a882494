// Command modelstub-client calls a modelstub server once with Generate and once with
// GenerateStream, and prints the replies. The server's address: $MODELSTUB_GRPC, or
// 127.0.0.1:50051 (where `modelstub serve` listens by default).
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	pb "example.com/modelstub-client/gen/modelstub/v1"
)

func main() {
	addr := os.Getenv("MODELSTUB_GRPC")
	if addr == "" {
		addr = "127.0.0.1:50051"
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	client := pb.NewModelServiceClient(conn)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Both calls land in one session of the server, which records them as one episode.
	ctx = metadata.AppendToOutgoingContext(ctx, "x-modelstub-session", "clients-go")

	reply, err := client.Generate(ctx, &pb.GenerateRequest{
		Model:    "modelstub-default",
		Messages: []*pb.Message{{Role: pb.Role_ROLE_USER, Content: "PROBE-ECHO Hello from Go"}},
	})
	if err != nil {
		log.Fatalf("Generate: %v", err)
	}
	fmt.Printf("Generate: %s\n", reply.GetMessage().GetContent())

	stream, err := client.GenerateStream(ctx, &pb.GenerateStreamRequest{
		Model:    "modelstub-default",
		Messages: []*pb.Message{{Role: pb.Role_ROLE_USER, Content: "PROBE-ECHO Streaming to Go"}},
	})
	if err != nil {
		log.Fatalf("GenerateStream: %v", err)
	}
	var text strings.Builder
	deltas, finish := 0, pb.FinishReason_FINISH_REASON_UNSPECIFIED
	for {
		frame, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatalf("GenerateStream: %v", err)
		}
		switch f := frame.GetFrame().(type) {
		case *pb.GenerateStreamResponse_TextDelta:
			text.WriteString(f.TextDelta)
			deltas++
		case *pb.GenerateStreamResponse_Final:
			finish = f.Final.GetFinishReason()
		}
	}
	fmt.Printf("GenerateStream: %s (%d deltas, %s)\n", text.String(), deltas, finish)
}
