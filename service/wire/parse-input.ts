import { z, type ZodType } from "zod";
import { badRequest } from "../errors";
import { typeName } from "./fields";
import { closestName, knownKeys, valueAt } from "./near-names";

/**
 * Parses `input` with `schema` or throws the 400 of invalid input: BAD_REQUEST, its message naming the first offending
 * field, `param` and `details.field` that field, `details.issues` every problem found.
 */
export function parseInput<T>(schema: ZodType<T>, input: unknown, where: string): T {
  const result = schema.safeParse(input ?? {});
  if (result.success) return result.data;
  const described = result.error.issues.flatMap((issue) => describeIssues(issue, input, schema));
  const first = described[0];
  const message = first.sentence ?? (first.field ? `${first.field} ${first.message}` : first.message);
  const issues = described.map(({ field, message }) => ({ field, message }));
  throw badRequest(message, { ...(first.field ? { field: first.field } : {}), in: where, issues });
}

/** One issue per field: a strict object's unknown keys become one issue each, named by their path. */
function describeIssues(
  issue: z.core.$ZodIssue,
  input: unknown,
  schema: ZodType,
): { field: string; message: string; sentence?: string }[] {
  if (issue.code === "unrecognized_keys" && /^Unrecognized key/.test(issue.message)) {
    // Only at the top level do we know the schema's fields; deeper, the key is named without a guess.
    const known = issue.path.length === 0 ? knownKeys(schema) : new Set<string>();
    return issue.keys.map((key) => {
      const guess = closestName(key, known);
      const field = [...issue.path, key].join(".");
      return {
        field,
        message: `is not a known parameter${guess ? ` (did you mean ${guess}?)` : ""}`,
        sentence: `Received unknown parameter: ${field}${guess ? `. Did you mean ${guess}?` : ""}`,
      };
    });
  }
  return [{ field: issue.path.join("."), message: describeIssue(issue, input) }];
}

/** "is required" only when the field is really absent; a field of the wrong type gets a message saying what was expected. */
function describeIssue(issue: z.core.$ZodIssue, input: unknown): string {
  const missing = valueAt(input, issue.path) === undefined;
  if (missing && (issue.code === "invalid_type" || issue.code === "invalid_union")) return "is required";
  // A union's own wording ("Invalid input") says nothing: say what was sent instead.
  if (issue.code === "invalid_union" && /^Invalid input$/.test(issue.message))
    return `has the wrong type (${typeName(valueAt(input, issue.path))})`;
  // Zod's own wording ("Invalid input: expected …") is replaced; a schema's custom message is kept.
  if (issue.code === "invalid_type" && /^Invalid input/.test(issue.message))
    return `must be ${article(issue.expected)}, not ${typeName(valueAt(input, issue.path))}`;
  return issue.message;
}

const article = (type: string) => (/^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`);
