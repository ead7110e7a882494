/** Bad scripts whose YAML or JSON does not parse, or parses to no script (quoting, indentation, brackets, aliases, nesting, control characters): [fixture, ...the lines the user sees, each after "FILE:"]. */
export const syntaxMistakes: [string, ...string[]][] = [
  [
    "apostrophe-in-single-quotes.yaml",
    "2:16: entries[0].reply: invalid YAML: text after the end of a single-quoted text (hint: inside single quotes write '' for one ', or use double quotes)",
  ],
  [
    "bad-indentation.yaml",
    "4:6: entries[0]: invalid YAML: this key is not indented like the keys beside it (hint: keys of one mapping start in the same column: line it up with the key above, or indent it further to nest it)",
  ],
  [
    "colon-in-plain-text.yaml",
    '2:12: entries[0].reply: invalid YAML: a `: ` inside an unquoted text starts a mapping (hint: quote the whole text: "Note: the build is green.")',
  ],
  [
    "control-character.yaml",
    '2:18: the script holds the control character U+0007: a script is text, and YAML allows only tabs and line breaks among control characters (hint: remove it, or write it as an escape inside a double-quoted text ("\\x07"); a binary file is not a script)',
  ],
  ["duplicate-key.yaml", "4:5: entries[0]: invalid YAML: the key `times` is given twice in this mapping (hint: each key may appear once: remove one of them)"],
  ["empty-file.yaml", "1:1: the script is empty (hint: a script is a mapping with `entries:` (a list of replies) or `steps:`)"],
  ["json-comment-in-entry.json", "4:26: entries[0]: invalid JSON: a comment (hint: JSON has no comments: remove it, or write the script as YAML)"],
  ["json-comment.json", "2:3: invalid JSON: a comment (hint: JSON has no comments: remove it, or write the script as YAML)"],
  [
    "json-nested-too-deep.json",
    "1:370: entries[0].reply.tool_calls[0].arguments.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a: lists and mappings nest deeper than 64 levels here (hint: a script needs about 9 levels: flatten the data (tool call arguments can also be a JSON text))",
  ],
  ["json-trailing-comma.json", "3:26: entries: invalid JSON: a comma before `]` (hint: JSON allows no comma after the last item: remove it)"],
  [
    "list-mapping-without-entries.yaml",
    "4:5: steps.plan: invalid YAML: a list item where a key of the mapping above was expected (hint: a mapping cannot also be a list: put the items under a key such as `entries:`, indented below it)",
  ],
  [
    "missing-dash-in-list.yaml",
    "4:2: entries[1]: invalid YAML: a list item without its `- ` (hint: start the item with `- `, or indent it like the keys of the item above)",
  ],
  [
    "nested-too-deep.yaml",
    "5:254: entries[0].reply.tool_calls[0].arguments.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a: lists and mappings nest deeper than 64 levels here (hint: a script needs about 9 levels: flatten the data (tool call arguments can also be a JSON text))",
  ],
  ["only-comments.yaml", "1:1: the script is empty (hint: a script is a mapping with `entries:` (a list of replies) or `steps:`)"],
  [
    "regex-backslash-in-double-quotes.yaml",
    "2:30: entries[0].match.regex: invalid YAML: invalid escape \\d in a double-quoted text (hint: in double quotes a backslash starts an escape: write a regex in single quotes ('\\d+'), or double each backslash)",
  ],
  ["tab-indentation.yaml", "2:1: entries: invalid YAML: a tab is used for indentation (hint: YAML indents with spaces only: replace the tab with spaces)"],
  ["text-is-a-list.yaml", "3:13: entries[0].reply.text: expected a text, got a list (hint: a text that starts with [ is read as a list: quote the whole text)"],
  ["top-level-list.yaml", "1:1: a script is a mapping with `entries:` or `steps:`, got a list (hint: put the list under `entries:`)"],
  [
    "top-level-text.yaml",
    '1:1: a script is a mapping with `entries:` or `steps:`, got the text "Hello, I am a script." (hint: start the file with `entries:` and a list of replies)',
  ],
  ["unclosed-list.yaml", "1:10: entries: invalid YAML: the [ list opened here is not closed (hint: add ] after its last item)"],
  ["unclosed-mapping.yaml", "2:12: entries[0].reply: invalid YAML: the { mapping opened here is not closed (hint: add } after its last item)"],
  ["unclosed-quote.yaml", '2:12: entries[0].reply: invalid YAML: this double-quoted text is not closed (hint: add the closing " at the end of the text)'],
  [
    "unquoted-template-in-arguments.yaml",
    '6:30: entries[0].reply.tool_calls[0].arguments.path: a {{variable}} must be quoted: unquoted, YAML reads it as a mapping (hint: write "{{match.1}}")',
  ],
  [
    "unquoted-template-in-text.yaml",
    '3:12: entries[0].reply: a {{variable}} must be quoted: unquoted, YAML reads it as a mapping (hint: write "{{last_user}} to you too")',
  ],
  ["unquoted-template-reply.yaml", '2:12: entries[0].reply: a {{variable}} must be quoted: unquoted, YAML reads it as a mapping (hint: write "{{last_user}}")'],
  [
    "yaml-alias-bomb.yaml",
    "6:8: f[0]: the aliases stand for more than 524288 characters (512 KiB) of script together: an alias bomb? (hint: each alias repeats its anchor's value, aliases inside that value included: use fewer or smaller aliases, or write the values out)",
  ],
  [
    "yaml-alias-inside-its-anchor.yaml",
    "6:37: entries[0].reply.tool_calls[0].arguments.again: the alias *args is inside the value its anchor &args marks, so it would repeat itself forever (hint: an alias can repeat only a value that ends before it: move it out of that value)",
  ],
  [
    "yaml-unresolved-alias.yaml",
    "2:14: entries[0].latency: the alias *slow has no anchor &slow before it (hint: put &slow before the value to repeat, above this alias (like `latency: &slow 250ms`), or check the spelling)",
  ],
];
