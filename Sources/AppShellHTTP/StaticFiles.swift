import Glibc

/// Serves the files under one directory (`Public/`) for `GET` and `HEAD`.
///
/// A request can never reach a file outside the directory: segments that are `.`, `..`, start
/// with a dot, or hold a slash, a backslash or a NUL byte (decoded or not) are refused with 404, and
/// the resolved real path — after symbolic links — must still lie inside the directory.
/// Responses carry `Content-Type`, `ETag`, `Last-Modified` and `Cache-Control`; a matching
/// `If-None-Match` (or, without one, an identical `If-Modified-Since`) gets 304.
public struct StaticFiles: HTTPResponder {
    /// The directory's real path, without a trailing slash.
    public let root: String
    /// `Cache-Control: max-age` in seconds for the files.
    public let maxAge: Int

    /// Serves `directory`; throws when it does not exist or is not a directory.
    public init(directory: String, maxAge: Int = 3600) throws(HTTPServerError) {
        guard let resolved = StaticFiles.realPath(directory), StaticFiles.isDirectory(resolved) else {
            throw HTTPServerError("the public directory \(directory) does not exist or is not a directory")
        }
        root = resolved == "/" ? "" : resolved
        self.maxAge = maxAge
    }

    /// Answers with the file the path names, or 404.
    public func respond(to request: Request) throws -> Response {
        guard let file = open(request.pathSegments) else {
            throw HTTPError.notFound("no file at \(request.path)")
        }
        guard request.method == .get || request.method == .head else {
            throw HTTPError(
                .methodNotAllowed, "\(request.method) is not allowed on a static file; allowed: GET, HEAD",
                headers: ["Allow": "GET, HEAD"])
        }
        let etag =
            "\"\(String(file.handle.size, radix: 16))-\(String(file.modified.seconds, radix: 16))"
            + "\(String(file.modified.nanoseconds, radix: 16))\""
        let lastModified = HTTPDate.format(seconds: file.modified.seconds)
        var headers: HTTPHeaders = [
            "ETag": etag,
            "Last-Modified": lastModified,
            // A versioned URL (`?v=`, content-hashed by the page) never changes: cache it for a year.
            "Cache-Control": request.query("v") != nil
                ? "public, max-age=31536000, immutable" : "public, max-age=\(maxAge)",
            "X-Content-Type-Options": "nosniff",
        ]
        if StaticFiles.notModified(request, etag: etag, lastModified: lastModified) {
            return Response(status: .notModified, headers: headers)
        }
        headers.add(name: "Content-Type", value: MediaType.forFile(file.path))
        return Response(status: .ok, headers: headers, body: .file(file.handle))
    }

    private struct Found {
        let path: String
        let handle: OpenFile
        let modified: (seconds: Int, nanoseconds: Int)
    }

    private func open(_ segments: [String]) -> Found? {
        for (offset, segment) in segments.enumerated() {
            if segment.isEmpty && offset != segments.count - 1 { return nil }
            if segment.hasPrefix(".") { return nil }
            if segment.utf8.contains(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "\\") || $0 == 0 }) {
                return nil
            }
        }
        let relative = segments.joined(separator: "/")
        guard var resolved = StaticFiles.realPath(root + "/" + relative) else { return nil }
        if StaticFiles.isDirectory(resolved) { resolved += "/index.html" }
        guard let real = StaticFiles.realPath(resolved), real.hasPrefix(root + "/") else { return nil }
        let descriptor = Glibc.open(real, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else { return nil }
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            close(descriptor)
            return nil
        }
        return Found(
            path: real, handle: OpenFile(descriptor: descriptor, size: Int(info.st_size)),
            modified: (Int(info.st_mtim.tv_sec), Int(info.st_mtim.tv_nsec)))
    }

    private static func notModified(_ request: Request, etag: String, lastModified: String) -> Bool {
        if let match = request.headers["If-None-Match"] {
            let strip: (Substring) -> Substring = { $0.hasPrefix("W/") ? $0.dropFirst(2) : $0 }
            return match.split(separator: ",").contains { candidate in
                let tag = candidate.trimmingSpacesSubstring()
                return tag == "*" || strip(tag) == strip(Substring(etag))
            }
        }
        if let since = request.headers["If-Modified-Since"] { return since == lastModified }
        return false
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = Glibc.realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    private static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }
}
