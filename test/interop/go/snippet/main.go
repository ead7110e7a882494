// Command snippet is the README's Go example: one Generate call.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	pb "modelstub.local/interop/gen/modelstub/v1"
)

func main() {
	conn, err := grpc.NewClient(os.Args[1], grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "x-modelstub-session", "readme-go")
	resp, err := pb.NewModelServiceClient(conn).Generate(ctx, &pb.GenerateRequest{
		Model:    "readme-model",
		Messages: []*pb.Message{{Role: pb.Role_ROLE_USER, Content: "Hello"}},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.GetMessage().GetContent())
}
