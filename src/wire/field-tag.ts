import { ScalarType, type DescField } from "@bufbuild/protobuf";

/*
 * Tags of the fields the hand-written codec reads and writes, taken from the generated
 * descriptors (gen/) once, when a codec module loads: the hot path compares and writes plain
 * numbers, and no field number is written by hand. A field renumbered or retyped in a .proto
 * changes its tag here; a field added to one is caught by test/wire/conformance.test.ts.
 */

/** The wire type of a scalar, as protobuf-es's BinaryWriter writes it. */
function scalarWireType(scalar: ScalarType): number {
  switch (scalar) {
    case ScalarType.STRING:
    case ScalarType.BYTES:
      return 2;
    case ScalarType.DOUBLE:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      return 1;
    case ScalarType.FLOAT:
    case ScalarType.FIXED32:
    case ScalarType.SFIXED32:
      return 5;
    default:
      return 0;
  }
}

/** The wire type of one value of `field` (one element of a repeated field that is not packed). */
function wireTypeOf(field: DescField): number {
  switch (field.fieldKind) {
    case "scalar":
      return scalarWireType(field.scalar);
    case "enum":
      return 0;
    case "message":
      return field.delimitedEncoding ? 3 : 2;
    case "map":
      return 2;
    case "list":
      if (field.listKind === "message") return field.delimitedEncoding ? 3 : 2;
      if (field.packed) return 2;
      return field.listKind === "enum" ? 0 : scalarWireType(field.scalar);
  }
}

/** The varint of (number << 3 | wire type): the tag protobuf-es writes before each value of `field`. */
function tagNumber(field: DescField): number {
  return ((field.number << 3) | wireTypeOf(field)) >>> 0;
}

/**
 * `field`'s tag, read from its descriptor. The writers take a one-byte tag (field numbers 1 to
 * 15): a field whose tag takes more throws here, when its codec module loads, not on a call.
 */
export function tagOf(field: DescField): number {
  const tag = tagNumber(field);
  if (tag > 0x7f) {
    throw new Error(
      `${field.parent.typeName}.${field.name} (field ${field.number}) takes a tag of more than one byte: write it with twoByteTagOf (src/wire/field-tag.ts)`,
    );
  }
  return tag;
}

/**
 * The one-byte tags of a message's fields by local name (`tagsOf(UsageSchema.field).inputTokens`),
 * read once at load into one object per message. A field numbered 16 or more, whose tag takes
 * two bytes, has none here: its writer takes twoByteTagOf (a field the codec does not know fails
 * test/wire/conformance.test.ts).
 */
export function tagsOf<K extends string>(fields: Readonly<Record<K, DescField>>): Readonly<Record<K, number>> {
  const tags = {} as Record<K, number>;
  for (const key of Object.keys(fields) as K[]) {
    const tag = tagNumber(fields[key]);
    if (tag <= 0x7f) tags[key] = tag;
  }
  return tags;
}

/** `field`'s two-byte tag (field numbers 16 to 2047) as its two bytes; throws, at load, for another length. */
export function twoByteTagOf(field: DescField): readonly [first: number, second: number] {
  const tag = tagNumber(field);
  if (tag <= 0x7f || tag > 0x3fff) {
    throw new Error(`${field.parent.typeName}.${field.name} (field ${field.number}) does not take a two-byte tag: write it with tagOf (src/wire/field-tag.ts)`);
  }
  return [(tag & 0x7f) | 0x80, tag >>> 7];
}

/**
 * Checks, at load, that fields of two messages written by one function have the same tags
 * (ToolCall and Tool are three strings each, written and read by one pair of functions).
 */
export function sameTags(a: readonly DescField[], b: readonly DescField[]): void {
  const tags = (fields: readonly DescField[]) => fields.map((f) => tagNumber(f)).join(",");
  if (tags(a) !== tags(b)) {
    const names = (fields: readonly DescField[]) => fields.map((f) => `${f.parent.typeName}.${f.name}`).join(", ");
    throw new Error(`the hand-written codec writes ${names(a)} and ${names(b)} alike, but their tags now differ: give each message its own writer`);
  }
}
