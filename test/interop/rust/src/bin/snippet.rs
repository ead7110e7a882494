//! The README's Rust example: one Generate call.
use std::time::Duration;

pub mod pb {
    tonic::include_proto!("modelstub.v1");
}
use pb::model_service_client::ModelServiceClient;
use pb::{GenerateRequest, Message, Role};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = std::env::args().nth(1).ok_or("usage: snippet HOST:PORT")?;
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    rt.block_on(async {
        let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))?
            .connect()
            .await?;
        let mut request = tonic::Request::new(GenerateRequest {
            model: "readme-model".into(),
            messages: vec![Message {
                role: Role::User as i32,
                content: "Hello".into(),
                ..Default::default()
            }],
            ..Default::default()
        });
        request.metadata_mut().insert("x-modelstub-session", "readme-rust".parse()?);
        request.set_timeout(Duration::from_secs(5));
        let reply = ModelServiceClient::new(channel).generate(request).await?.into_inner();
        println!("{}", reply.message.unwrap_or_default().content);
        Ok(())
    })
}
