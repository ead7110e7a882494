import type { CompiledScript, DeclaredModel } from "../script/compiled-script.js";

/**
 * The models a script lists (ListModels, ModelPort.listModels): those it declares, or, with none
 * declared, its default model alone. One definition for the gRPC service and the in-process port.
 */
export function modelsOf(script: CompiledScript): DeclaredModel[] {
  if (script.models.length > 0) return script.models;
  return [
    {
      id: script.defaultModel,
      name: script.defaultModel,
      ownedBy: "modelstub",
      contextLength: 0,
      inputModalities: ["text"],
      outputModalities: ["text"],
      promptPrice: "0",
      completionPrice: "0",
    },
  ];
}
