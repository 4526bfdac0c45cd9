/**
 * The kinds of file a token document may be, each recognised by its first bytes (never by the name or the type the
 * uploader declared): what the service stores, serves and names in its refusals. Nothing a browser would run (HTML,
 * SVG, XML, scripts) is among them, and every document is served as an attachment under a sandbox policy besides.
 */
export interface DocumentType {
  /** The Content-Type it is stored and served with. */
  mediaType: string;
  /** The file name extension of its download. */
  extension: string;
  /** Whether `head` (the file's first bytes, at least SNIFF_BYTES of them when the file is that long) starts such a file. */
  starts(head: Buffer): boolean;
}

/** A file received whole, with the kind its bytes showed. */
export interface CheckedFile {
  buffer: Buffer;
  /** The Content-Type its bytes showed; the type the uploader declared is never used. */
  mediaType: string;
}

/** How many of a file's first bytes decide its kind (the longest signature below, and enough to tell text). */
export const SNIFF_BYTES = 512;

const startsWith = (head: Buffer, ...bytes: number[]) =>
  head.length >= bytes.length && bytes.every((b, i) => head[i] === b);

export const DOCUMENT_TYPES: readonly DocumentType[] = [
  { mediaType: "application/pdf", extension: "pdf", starts: (h) => startsWith(h, 0x25, 0x50, 0x44, 0x46, 0x2d) }, // %PDF-
  {
    mediaType: "image/png",
    extension: "png",
    starts: (h) => startsWith(h, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a),
  },
  { mediaType: "image/jpeg", extension: "jpg", starts: (h) => startsWith(h, 0xff, 0xd8, 0xff) },
  {
    mediaType: "image/webp",
    extension: "webp",
    starts: (h) => startsWith(h, 0x52, 0x49, 0x46, 0x46) && h.subarray(8, 12).toString("latin1") === "WEBP",
  },
  {
    mediaType: "text/plain; charset=utf-8",
    extension: "txt",
    starts: (h) => h.length > 0 && isPlainText(h, true) && !isMarkup(h),
  },
];

/** Markup a browser would render (HTML, SVG, XML): refused as text wherever it appears in a file's first bytes. */
const MARKUP =
  /<\s*(?:!doctype|html|head|body|script|iframe|object|embed|svg|math|img|style|link|meta|base|form|\?xml)\b/i;

/** Text whose first non-blank character opens a tag, or that carries a tag a browser acts on. */
function isMarkup(bytes: Buffer): boolean {
  const text = bytes.toString("utf8");
  return /^[\s\ufeff]*</.test(text) || MARKUP.test(text);
}

/** The allowed kinds as a refusal names them. */
export const ALLOWED_DOCUMENT_TYPES = "PDF, PNG, JPEG, WebP or plain text (UTF-8)";

/** The kind of a file from its first bytes; undefined when it is none of the allowed ones. */
export function documentTypeOf(head: Buffer): DocumentType | undefined {
  return DOCUMENT_TYPES.find((t) => t.starts(head));
}

/** The kind of a whole file: its first bytes decide, and a text file must be plain UTF-8 text to its end. */
export function documentTypeOfFile(content: Buffer): DocumentType | undefined {
  const type = documentTypeOf(content.subarray(0, SNIFF_BYTES));
  if (type?.extension === "txt" && (!isPlainText(content, false) || isMarkup(content))) return undefined;
  return type;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * UTF-8 text without control characters other than tab, line feed, form feed and carriage return. `truncated`: the
 * bytes may end inside a character (the first bytes of a longer file), which is not held against them.
 */
function isPlainText(bytes: Buffer, truncated: boolean): boolean {
  for (const b of bytes)
    if ((b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0c && b !== 0x0d) || b === 0x7f) return false;
  let end = bytes.length;
  if (truncated) {
    // Drop an incomplete last character: up to 3 continuation bytes after its lead byte.
    let i = end - 1;
    while (i >= 0 && end - i <= 4 && (bytes[i] & 0xc0) === 0x80) i--;
    if (i >= 0 && bytes[i] >= 0xc0) {
      const needed = bytes[i] >= 0xf0 ? 4 : bytes[i] >= 0xe0 ? 3 : 2;
      if (end - i < needed) end = i;
    }
  }
  try {
    utf8.decode(bytes.subarray(0, end));
    return true;
  } catch {
    return false;
  }
}
