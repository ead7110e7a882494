import { create, ScalarType, type DescField, type DescMessage, type Message, type UnknownField } from "@bufbuild/protobuf";

/*
 * Messages that set the fields of a schema, read from its descriptor: what the conformance test
 * encodes with the hand-written codec and with protobuf-es, field by field. A field added to a
 * .proto is set here as soon as gen/ is regenerated, with nothing to edit: that is the point.
 */

/** Variants of every value: each scalar kind at small, large, negative, non-ASCII and edge values. */
export const variants = [0, 1, 2, 3] as const;
type Variant = (typeof variants)[number];

const samples: Partial<Record<ScalarType, readonly unknown[]>> = {
  // Variant 3 is the zero value: a field with explicit presence is still written when set to it.
  [ScalarType.STRING]: ["a", "héllo ✓ 𝄞 lone \ud800 surrogate", `${"long ascii ".repeat(8)}é`, ""],
  [ScalarType.BYTES]: [Uint8Array.of(1), Uint8Array.of(0, 255, 128), new Uint8Array(300).fill(7), new Uint8Array(0)],
  [ScalarType.UINT32]: [1, 300, 0xffff_ffff, 0],
  [ScalarType.INT32]: [1, -1, 0x7fff_ffff, 0],
  [ScalarType.SINT32]: [1, -1, -0x8000_0000, 0],
  [ScalarType.FIXED32]: [1, 300, 0xffff_ffff, 0],
  [ScalarType.SFIXED32]: [1, -1, 0x7fff_ffff, 0],
  [ScalarType.UINT64]: [1n, 0x1_0000_0000n, 0xffff_ffff_ffff_ffffn, 0n],
  [ScalarType.INT64]: [1n, -1n, 0x7fff_ffff_ffff_ffffn, 0n],
  [ScalarType.SINT64]: [1n, -1n, -0x8000_0000_0000_0000n, 0n],
  [ScalarType.FIXED64]: [1n, 0x1_0000_0000n, 0xffff_ffff_ffff_ffffn, 0n],
  [ScalarType.SFIXED64]: [1n, -1n, 0x7fff_ffff_ffff_ffffn, 0n],
  [ScalarType.DOUBLE]: [1.5, -0, Number.NaN, 0],
  [ScalarType.FLOAT]: [1.5, -0, Number.POSITIVE_INFINITY, 0],
  [ScalarType.BOOL]: [true, true, true, false],
};

function scalar(type: ScalarType, v: Variant): unknown {
  const values = samples[type];
  if (values === undefined) throw new Error(`no sample values for scalar type ${ScalarType[type]}: add them to test/wire/schema-cases.ts`);
  return values[v];
}

/** An enum value: a named one, an unnamed positive one, a negative one (open enums keep them), zero. */
function enumValue(v: Variant): number {
  return [1, 999, -5, 0][v]!;
}

/** Unknown fields, as a newer peer's message carries them: a varint, a text, a fixed64. */
function unknownFields(): UnknownField[] {
  return [
    { no: 99, wireType: 0, data: Uint8Array.of(0x96, 0x01) },
    { no: 100, wireType: 2, data: Uint8Array.of(2, 0x68, 0x69) },
    { no: 2047, wireType: 1, data: new Uint8Array(8).fill(9) },
  ];
}

/** Options of a case: unknown fields at every level (the hand decoders leave those to fromBinary). */
export interface CaseOptions {
  unknown: boolean;
}

/** The value of `field` in variant `v` (a nested message with every field set). */
function fieldValue(field: DescField, v: Variant, options: CaseOptions, depth: number): unknown {
  switch (field.fieldKind) {
    case "scalar":
      return scalar(field.scalar, v);
    case "enum":
      return enumValue(v);
    case "message":
      // Variant 3: a set message with nothing in it, which is written as an empty field.
      return v === 3 ? create(field.message) : filled(field.message, v, options, depth + 1, 0);
    case "list": {
      const next = ((v + 1) % 3) as Variant;
      // Three elements: two set ones and a zero one (an element is written even when zero).
      if (field.listKind === "message") {
        return [filled(field.message, v, options, depth + 1, 0), filled(field.message, next, options, depth + 1, 1), create(field.message)];
      }
      if (field.listKind === "enum") return [enumValue(v), enumValue(next), 0];
      return [scalar(field.scalar, v), scalar(field.scalar, next), scalar(field.scalar, 3)];
    }
    case "map":
      throw new Error(`${field.parent.typeName}.${field.name} is a map: teach test/wire/schema-cases.ts to fill maps before the codec writes one`);
  }
}

/** Sets `field` of `message` to `value`, a oneof member through its oneof. */
function set(message: Message, field: DescField, value: unknown): void {
  const m = message as unknown as Record<string, unknown>;
  if (field.oneof !== undefined) m[field.oneof.localName] = { case: field.localName, value };
  else m[field.localName] = value;
}

/**
 * `schema` with every field set in variant `v`: the regular fields, and of each oneof the member
 * `arm` picks (arm modulo the oneof's members), so that a walk over arms sets each of them.
 */
export function filled<T extends DescMessage>(schema: T, v: Variant, options: CaseOptions, depth = 0, arm = 0): Message {
  if (depth > 6) throw new Error(`${schema.typeName} nests more than 6 levels: a recursive message needs a bound in test/wire/schema-cases.ts`);
  const message = create(schema) as Message;
  for (const field of schema.fields) {
    if (field.oneof !== undefined && field.oneof.fields[arm % field.oneof.fields.length] !== field) continue;
    set(message, field, fieldValue(field, v, options, depth));
  }
  if (options.unknown) message.$unknown = unknownFields();
  return message;
}

/** One message to encode both ways, and its name in a failure. */
export interface SchemaCase {
  /** The field set alone; undefined for a case that sets every field. */
  field: string | undefined;
  label: string;
  message: Message;
}

/**
 * Every case of `schema`: each field set alone (each oneof member too), in every variant; then
 * every field set at once, once per oneof member, in every variant.
 */
export function schemaCases(schema: DescMessage, options: CaseOptions): SchemaCase[] {
  const cases: SchemaCase[] = [];
  for (const field of schema.fields) {
    for (const v of variants) {
      const message = create(schema) as Message;
      set(message, field, fieldValue(field, v, options, 0));
      if (options.unknown) message.$unknown = unknownFields();
      cases.push({ field: field.name, label: `${schema.typeName}.${field.name} alone, variant ${v}`, message });
    }
  }
  const arms = Math.max(1, ...schema.oneofs.map((o) => o.fields.length));
  for (let arm = 0; arm < arms; arm++) {
    for (const v of variants) {
      cases.push({
        field: undefined,
        label: `${schema.typeName} with every field set, oneof member ${arm}, variant ${v}`,
        message: filled(schema, v, options, 0, arm),
      });
    }
  }
  return cases;
}
