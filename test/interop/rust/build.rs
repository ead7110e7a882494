// Generates the modelstub.v1 messages and the client stubs from the repository's protos.
// protoc comes from the protoc-bin-vendored crate, so no system protoc is needed.
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    let proto_root = manifest.join("../../../proto").canonicalize()?;
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
    tonic_prost_build::configure()
        .build_server(false)
        .build_client(true)
        .build_transport(false)
        .compile_protos(&files, &[proto_root])?;
    Ok(())
}
