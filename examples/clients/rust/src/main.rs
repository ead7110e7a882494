//! Calls a modelstub server once with Generate and once with GenerateStream, and prints the
//! replies. The server's address: $MODELSTUB_GRPC, or 127.0.0.1:50051 (where `modelstub serve`
//! listens by default).
use std::error::Error;
use std::time::Duration;

pub mod pb {
    tonic::include_proto!("modelstub.v1");
}
use pb::generate_stream_response::Frame;
use pb::model_service_client::ModelServiceClient;
use pb::{FinishReason, GenerateRequest, GenerateStreamRequest, Message, Role};

/// A request carrying the session header and a deadline. Both calls land in one session of the
/// server, which records them as one episode.
fn request<T>(message: T) -> Result<tonic::Request<T>, Box<dyn Error>> {
    let mut request = tonic::Request::new(message);
    request.metadata_mut().insert("x-modelstub-session", "clients-rust".parse()?);
    request.set_timeout(Duration::from_secs(10));
    Ok(request)
}

fn user(content: &str) -> Vec<Message> {
    vec![Message { role: Role::User as i32, content: content.into(), ..Default::default() }]
}

fn main() -> Result<(), Box<dyn Error>> {
    let addr = std::env::var("MODELSTUB_GRPC").unwrap_or_else(|_| "127.0.0.1:50051".into());
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    rt.block_on(async {
        let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))?
            .connect()
            .await?;
        let mut client = ModelServiceClient::new(channel);

        let reply = client
            .generate(request(GenerateRequest {
                model: "modelstub-default".into(),
                messages: user("PROBE-ECHO Hello from Rust"),
                ..Default::default()
            })?)
            .await?
            .into_inner();
        println!("Generate: {}", reply.message.unwrap_or_default().content);

        let mut frames = client
            .generate_stream(request(GenerateStreamRequest {
                model: "modelstub-default".into(),
                messages: user("PROBE-ECHO Streaming to Rust"),
                ..Default::default()
            })?)
            .await?
            .into_inner();
        let (mut text, mut deltas, mut finish) = (String::new(), 0, FinishReason::Unspecified);
        while let Some(frame) = frames.message().await? {
            match frame.frame {
                Some(Frame::TextDelta(delta)) => {
                    text.push_str(&delta);
                    deltas += 1;
                }
                Some(Frame::Final(end)) => finish = end.finish_reason(),
                _ => {}
            }
        }
        println!("GenerateStream: {text} ({deltas} deltas, {})", finish.as_str_name());
        Ok(())
    })
}
