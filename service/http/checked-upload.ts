import type { Request, Response } from "express";
import type { StorageEngine } from "multer";
import { ApiError, badRequest } from "../errors";
import {
  ALLOWED_DOCUMENT_TYPES,
  documentTypeOf,
  documentTypeOfFile,
  SNIFF_BYTES,
  type CheckedFile,
} from "../model/document-types";
import { lazyModule } from "../lazy-module";

/** multer (multipart bodies), loaded with the first upload. */
const multer = lazyModule<typeof import("multer")>("multer");

export interface UploadRules {
  /** The file fields taken (one file each); any other file field is refused. */
  fields: readonly string[];
  /** The largest file taken. */
  maxFileBytes: number;
  /**
   * Runs before each file's bytes are read, with the text fields received so far (req.body): a refusal here (another
   * key's token, …) stops the upload before anything of the file is kept.
   */
  beforeFile?: (req: Request) => Promise<void>;
}

/** Multipart bytes beyond the files themselves a request may carry (boundaries, headers, the text fields). */
const ENVELOPE_BYTES = 64 * 1024;

/** The refusal of a file whose first bytes are none of the allowed kinds. */
function unsupportedType(field: string): ApiError {
  return new ApiError(
    "UNSUPPORTED_MEDIA_TYPE",
    `${field}: the file is not one of the types taken: ${ALLOWED_DOCUMENT_TYPES}`,
    {
      field,
      allowed: ["application/pdf", "image/png", "image/jpeg", "image/webp", "text/plain"],
    },
  );
}

/**
 * A multer storage engine that keeps a file in memory only once its first bytes showed an allowed kind: a file of any
 * other kind is refused after at most SNIFF_BYTES of it were read, and a text file must stay plain text to its end.
 * `refuse` hears a refusal at once (multer itself would answer only after reading the rest of the request).
 */
function checkedMemoryStorage(refuse: (error: ApiError) => void, maxFileBytes: number): StorageEngine {
  return {
    _handleFile(_req, file, callback) {
      const chunks: Buffer[] = [];
      let size = 0;
      let checked = false;
      let refused = false;
      const stop = (error: ApiError) => {
        refused = true;
        refuse(error);
        file.stream.resume();
        callback(error);
      };
      const check = () => {
        checked = true;
        if (documentTypeOf(Buffer.concat(chunks).subarray(0, SNIFF_BYTES))) return true;
        stop(unsupportedType(file.fieldname));
        return false;
      };
      file.stream.on("limit", () => !refused && stop(tooLarge(file.fieldname, maxFileBytes)));
      file.stream.on("data", (chunk: Buffer) => {
        if (refused) return;
        chunks.push(chunk);
        size += chunk.length;
        if (!checked && size >= SNIFF_BYTES) check();
      });
      file.stream.on("error", (error) => !refused && callback(error));
      file.stream.on("end", () => {
        if (refused || (!checked && !check())) return;
        const buffer = Buffer.concat(chunks, size);
        const type = documentTypeOfFile(buffer);
        if (!type) return stop(unsupportedType(file.fieldname));
        callback(null, { buffer, size, mimetype: type.mediaType });
      });
    },
    _removeFile(_req, file, callback) {
      delete (file as { buffer?: Buffer }).buffer;
      callback(null);
    },
  };
}

const tooLarge = (field: string | undefined, maxFileBytes: number) =>
  new ApiError(
    "PAYLOAD_TOO_LARGE",
    `${field ?? "file"}: a document may be at most ${maxFileBytes / (1024 * 1024)} MB`,
    { field, maxBytes: maxFileBytes },
  );

/** multer's refusals as the API's: sizes are a 413 naming the field, the rest a 400. */
function uploadError(error: unknown, maxFileBytes: number): ApiError {
  if (error instanceof ApiError) return error;
  const { code, field, message } = error as { code?: string; field?: string; message?: string };
  if (code === "LIMIT_FILE_SIZE") return tooLarge(field, maxFileBytes);
  if (code === "LIMIT_UNEXPECTED_FILE")
    return badRequest(
      `${field ?? "file"} is not a document field (one file each of the fields named in the documentation)`,
      { field },
    );
  return badRequest(`Upload rejected: ${message ?? "malformed multipart body"}`, { field });
}

/**
 * Reads a multipart upload with its limits checked before the bytes are kept: a declared Content-Length over what the
 * files may add up to is refused before anything is read, each file's kind is taken from its first bytes (415 for
 * anything else), sizes are counted as the bytes arrive (413), and `beforeFile` decides before each file is read.
 */
export async function receiveCheckedFiles(
  req: Request,
  res: Response,
  rules: UploadRules,
): Promise<Record<string, CheckedFile>> {
  const declared = Number(req.get("content-length") ?? NaN);
  const most = rules.fields.length * rules.maxFileBytes + ENVELOPE_BYTES;
  if (Number.isFinite(declared) && declared > most) {
    throw new ApiError(
      "PAYLOAD_TOO_LARGE",
      `The upload is ${declared} bytes: at most ${most} (${rules.fields.length} documents of ${rules.maxFileBytes / (1024 * 1024)} MB)`,
      { maxBytes: most },
    );
  }
  // A refusal answers at once and the connection closes after the answer: the rest of the upload is never read.
  let refuse!: (error: ApiError) => void;
  const refused = new Promise<never>((_resolve, reject) => (refuse = reject));
  const upload = multer()({
    storage: checkedMemoryStorage((error) => refuse(error), rules.maxFileBytes),
    limits: {
      fileSize: rules.maxFileBytes,
      files: rules.fields.length,
      fields: 16,
      fieldSize: 16 * 1024,
      parts: rules.fields.length + 16,
    },
    fileFilter: (request, _file, accept) => {
      if (!rules.beforeFile) return accept(null, true);
      rules.beforeFile(request).then(
        () => accept(null, true),
        (error: Error) => {
          if (error instanceof ApiError) refuse(error);
          accept(error);
        },
      );
    },
  }).fields(rules.fields.map((name) => ({ name, maxCount: 1 })));
  const read = new Promise<void>((resolve, reject) =>
    upload(req, res, (error: unknown) => (error ? reject(uploadError(error, rules.maxFileBytes)) : resolve())),
  );
  try {
    await Promise.race([read, refused]);
  } catch (error) {
    res.setHeader("Connection", "close");
    read.catch(() => undefined);
    throw error;
  }
  const received = (req.files ?? {}) as Record<string, (Express.Multer.File & { buffer: Buffer })[]>;
  const files: Record<string, CheckedFile> = {};
  for (const [field, [file]] of Object.entries(received))
    if (file) files[field] = { buffer: file.buffer, mediaType: file.mimetype };
  return files;
}
