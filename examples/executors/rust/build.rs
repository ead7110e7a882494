// Generates the modelstub.v1 messages and client stubs from the repository's proto/ (or the
// folder in MODELSTUB_PROTO). protoc comes from the protoc-bin-vendored crate, so no system
// protoc is needed.
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-env-changed=MODELSTUB_PROTO");
    let proto_root = match std::env::var("MODELSTUB_PROTO") {
        Ok(dir) => PathBuf::from(dir),
        Err(_) => PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?).join("../../../proto"),
    };
    let files: Vec<PathBuf> = ["control.proto", "episode.proto", "model.proto"]
        .iter()
        .map(|f| proto_root.join("modelstub/v1").join(f))
        .collect();
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
    }
    let protoc = protoc_bin_vendored::protoc_bin_path()?;
    // SAFETY: build scripts are single-threaded at this point.
    unsafe { std::env::set_var("PROTOC", protoc) };
    // Without tonic's `transport` feature: connect through tonic::transport::Endpoint.
    tonic_prost_build::configure()
        .build_server(false)
        .build_client(true)
        .build_transport(false)
        .compile_protos(&files, &[proto_root])?;
    Ok(())
}
