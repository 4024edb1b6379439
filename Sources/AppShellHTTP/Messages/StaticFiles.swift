import AppShellConcurrency
import Glibc

/// Serves the files under one directory (`Public/`) for `GET` and `HEAD`.
///
/// A request can never reach a file outside the directory: segments that are `.`, `..`, start
/// with a dot, or hold a slash, a backslash or a NUL byte (decoded or not) are refused with 404, and
/// the resolved real path — after symbolic links — must still lie inside the directory.
/// Responses carry `Content-Type`, `ETag`, `Last-Modified` and `Cache-Control`; a matching
/// `If-None-Match` (or, without one, an identical `If-Modified-Since`) gets 304, whose
/// `Content-Length` is the file's (RFC 9110 §8.6).
///
/// Small files are kept in memory as prepared responses once served: a later request for the
/// same path costs one stat(2) — the file must still be the same one (device, inode, size and
/// modification time), else it is resolved and read again.
package struct StaticFiles: HTTPResponder {
    /// The directory's real path, without a trailing slash.
    package let root: String
    /// `Cache-Control: max-age` in seconds for the files.
    package let maxAge: Int
    /// Files of up to this many bytes are kept in memory.
    package static let cachedFileLimit = 256 * 1024
    /// At most this many paths are kept in memory (beyond it, files are read each time).
    package static let cachedPathLimit = 256
    private let cache = Locked<[String: CachedFile]>([:])

    /// A file kept in memory with the answers made from it.
    private struct CachedFile {
        let identity: FileIdentity
        let etag: String
        let lastModified: String
        let response: PreparedResponse
    }

    /// What tells whether a path still names the same, unchanged file.
    private struct FileIdentity: Equatable {
        let device: UInt
        let inode: UInt
        let size: Int
        let seconds: Int
        let nanoseconds: Int

        init(_ info: stat) {
            device = UInt(info.st_dev)
            inode = UInt(info.st_ino)
            size = Int(info.st_size)
            seconds = Int(info.st_mtim.tv_sec)
            nanoseconds = Int(info.st_mtim.tv_nsec)
        }
    }

    /// Serves `directory`; throws when it does not exist or is not a directory.
    package init(directory: String, maxAge: Int = 3600) throws(HTTPServerError) {
        guard let resolved = StaticFiles.realPath(directory), StaticFiles.isDirectory(resolved) else {
            throw HTTPServerError("the public directory \(directory) does not exist or is not a directory")
        }
        root = resolved == "/" ? "" : resolved
        self.maxAge = maxAge
    }

    /// Answers with the file the path names, or 404.
    package func respond(to request: Request) throws -> Response {
        guard request.method.isStandard else { throw HTTPError.notImplemented(request.method) }
        guard StaticFiles.isSafe(request.pathSegments) else { throw HTTPError.notFound("no file at \(request.path)") }
        // A versioned URL (`?v=`, content-hashed by the page) never changes: cache it for a year.
        let versioned = request.query("v") != nil
        let relative = request.pathSegments.joined(separator: "/")
        let key = versioned ? relative + "?v" : relative
        if let cached = cache.withLock({ $0[key] }), let info = StaticFiles.status(root + "/" + relative),
            FileIdentity(info) == cached.identity
        {
            try StaticFiles.checkMethod(request)
            if StaticFiles.notModified(request, etag: cached.etag, lastModified: cached.lastModified) {
                var headers = cached.response.response.headers
                headers.remove(name: "Content-Type")
                return .notModified(headers: headers, length: cached.identity.size)
            }
            return .prepared(cached.response)
        }
        guard let file = open(relative) else { throw HTTPError.notFound("no file at \(request.path)") }
        try StaticFiles.checkMethod(request)
        let identity = FileIdentity(file.info)
        let etag =
            "\"\(String(identity.size, radix: 16))-\(String(identity.seconds, radix: 16))"
            + "\(String(identity.nanoseconds, radix: 16))\""
        let lastModified = HTTPDate.format(seconds: identity.seconds)
        var headers: HTTPHeaders = [
            "ETag": etag,
            "Last-Modified": lastModified,
            "Cache-Control": versioned ? "public, max-age=31536000, immutable" : "public, max-age=\(maxAge)",
            "X-Content-Type-Options": "nosniff",
        ]
        if StaticFiles.notModified(request, etag: etag, lastModified: lastModified) {
            return .notModified(headers: headers, length: identity.size)
        }
        headers.add(name: "Content-Type", value: MediaType.forFile(file.path))
        if identity.size <= StaticFiles.cachedFileLimit, let bytes = file.handle.readAll(), bytes.count == identity.size
        {
            let response = PreparedResponse(Response(status: .ok, headers: headers, body: .bytes(bytes)))
            cache.withLock { cache in
                if cache.count < StaticFiles.cachedPathLimit || cache[key] != nil {
                    cache[key] = CachedFile(
                        identity: identity, etag: etag, lastModified: lastModified, response: response)
                }
            }
            return .prepared(response)
        }
        return Response(status: .ok, headers: headers, body: .file(file.handle))
    }

    /// False: files are only read, a body sent with a request for one is discarded.
    package func acceptsBody(_ request: Request) -> Bool { false }

    private static func checkMethod(_ request: Request) throws(HTTPError) {
        guard request.method == .get || request.method == .head else {
            throw HTTPError(
                .methodNotAllowed, "\(request.method) is not allowed on a static file; allowed: GET, HEAD",
                headers: ["Allow": "GET, HEAD"])
        }
    }

    private struct Found {
        let path: String
        let handle: OpenFile
        let info: stat
    }

    /// Whether the segments can name a file inside the directory: none is `.`, `..` or another
    /// dot-name, none holds a slash, a backslash or NUL, and only the last may be empty.
    private static func isSafe(_ segments: [String]) -> Bool {
        for (offset, segment) in segments.enumerated() {
            if segment.isEmpty && offset != segments.count - 1 { return false }
            // The byte, not `hasPrefix`: a dot and a combining mark after it are one Character.
            if segment.utf8.first == UInt8(ascii: ".") { return false }
            if segment.utf8.contains(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "\\") || $0 == 0 }) {
                return false
            }
        }
        return true
    }

    private func open(_ relative: String) -> Found? {
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
        return Found(path: real, handle: OpenFile(descriptor: descriptor, size: Int(info.st_size)), info: info)
    }

    /// The status of the file `path` names after symbolic links (a directory's `index.html`).
    private static func status(_ path: String) -> stat? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            guard stat(path + "/index.html", &info) == 0 else { return nil }
        }
        return (info.st_mode & S_IFMT) == S_IFREG ? info : nil
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
