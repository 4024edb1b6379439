import AppShellHTTP
import AppShellTesting
import Foundation
import Testing

/// Static files from a public directory, and every way of trying to leave it.
@Suite struct StaticFilesTests {
    /// A temporary tree: `<root>/secret.txt` outside, `<root>/public/…` inside.
    final class Tree {
        let root: String
        var publicDirectory: String { root + "/public" }

        init() throws {
            root = NSTemporaryDirectory() + "appshell-static-" + UUID().uuidString
            let files = FileManager.default
            try files.createDirectory(atPath: root + "/public/css", withIntermediateDirectories: true)
            try files.createDirectory(atPath: root + "/public/docs", withIntermediateDirectories: true)
            try "top secret".write(toFile: root + "/secret.txt", atomically: true, encoding: .utf8)
            try "<!doctype html><title>home</title>".write(
                toFile: root + "/public/index.html", atomically: true, encoding: .utf8)
            try "body{color:red}".write(toFile: root + "/public/css/app.css", atomically: true, encoding: .utf8)
            try "export const a = 1;".write(toFile: root + "/public/app.js", atomically: true, encoding: .utf8)
            try Data([0x89, 0x50, 0x4E, 0x47]).write(to: URL(fileURLWithPath: root + "/public/logo.png"))
            try "docs".write(toFile: root + "/public/docs/index.html", atomically: true, encoding: .utf8)
            try "hidden".write(toFile: root + "/public/.env", atomically: true, encoding: .utf8)
            // A dot-name whose dot and the combining mark after it are one Character.
            try "hidden".write(toFile: root + "/public/.\u{301}env", atomically: true, encoding: .utf8)
            try files.createSymbolicLink(atPath: root + "/public/escape.txt", withDestinationPath: root + "/secret.txt")
            try files.createSymbolicLink(atPath: root + "/public/outside", withDestinationPath: root)
            try files.createSymbolicLink(atPath: root + "/public/alias.css", withDestinationPath: "css/app.css")
        }

        deinit { try? FileManager.default.removeItem(atPath: root) }
    }

    static func serve(_ tree: Tree) throws -> LiveServer {
        try LiveServer(responder: Router(fallback: try StaticFiles(directory: tree.publicDirectory, maxAge: 600)))
    }

    @Test(arguments: [
        ("/css/app.css", "text/css; charset=utf-8", "body{color:red}"),
        ("/app.js", "text/javascript; charset=utf-8", "export const a = 1;"),
        ("/", "text/html; charset=utf-8", "<!doctype html><title>home</title>"),
        ("/index.html", "text/html; charset=utf-8", "<!doctype html><title>home</title>"),
        ("/docs/", "text/html; charset=utf-8", "docs"),
        ("/alias.css", "text/css; charset=utf-8", "body{color:red}"),
    ])
    func servesFilesWithTheirType(path: String, type: String, body: String) throws {
        let tree = try Tree()
        let live = try Self.serve(tree)
        let response = try live.client().get(path)
        #expect(response.status == 200)
        #expect(response.headers["Content-Type"] == type)
        #expect(response.text == body)
        #expect(response.headers["Cache-Control"] == "public, max-age=600")
        #expect(response.headers["ETag"] != nil)
    }

    @Test func servesBinaryFiles() throws {
        let tree = try Tree()
        let live = try Self.serve(tree)
        let response = try live.client().get("/logo.png")
        #expect(response.headers["Content-Type"] == "image/png")
        #expect(response.body == [0x89, 0x50, 0x4E, 0x47])
    }

    @Test func revalidatesWithETagAndLastModified() throws {
        let tree = try Tree()
        let live = try Self.serve(tree)
        let client = live.client()
        let first = try client.get("/css/app.css")
        let etag = try #require(first.headers["ETag"])
        let again = try client.get("/css/app.css", headers: [("If-None-Match", etag)])
        #expect(again.status == 304)
        #expect(again.body.isEmpty)
        #expect(again.headers["ETag"] == etag)
        let listed = try client.get("/css/app.css", headers: [("If-None-Match", "\"other\", W/\(etag)")])
        #expect(listed.status == 304)
        let stale = try client.get("/css/app.css", headers: [("If-None-Match", "\"other\"")])
        #expect(stale.status == 200)
        #expect(stale.text == "body{color:red}")
        let modified = try #require(first.headers["Last-Modified"])
        #expect(try client.get("/css/app.css", headers: [("If-Modified-Since", modified)]).status == 304)
    }

    @Test func changedFileGetsNewETag() throws {
        let tree = try Tree()
        let live = try Self.serve(tree)
        let before = try live.client().get("/app.js").headers["ETag"]
        try "export const a = 22;".write(toFile: tree.publicDirectory + "/app.js", atomically: true, encoding: .utf8)
        let after = try live.client().get("/app.js")
        #expect(after.headers["ETag"] != before)
        #expect(after.text == "export const a = 22;")
    }

    @Test func aFileKeptInMemoryIsReadAgainWhenItChangesOrGoes() throws {
        let tree = try Tree()
        let live = try Self.serve(tree)
        let client = live.client()
        let path = tree.publicDirectory + "/app.js"
        #expect(try client.get("/app.js").text == "export const a = 1;")
        #expect(try client.get("/app.js").text == "export const a = 1;")  // from memory
        // Rewritten in place (same inode, same size): the modification time tells.
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.write(contentsOf: Array("export const b = 2;".utf8))
        try handle.close()
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: 5)], ofItemAtPath: path)
        #expect(try client.get("/app.js").text == "export const b = 2;")
        // Replaced by a link out of the directory: refused, not served from memory.
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: tree.root + "/secret.txt")
        let escaped = try client.get("/app.js")
        #expect(escaped.status == 404)
        #expect(!escaped.text.contains("top secret"))
        // Gone.
        try FileManager.default.removeItem(atPath: path)
        #expect(try client.get("/app.js").status == 404)
    }

    @Test func versionedAndPlainURLsKeepTheirOwnCaching() throws {
        let tree = try Tree()
        let live = try Self.serve(tree)
        let client = live.client()
        for _ in 0..<2 {
            #expect(
                try client.get("/app.js?v=abc").headers["Cache-Control"] == "public, max-age=31536000, immutable")
            #expect(try client.get("/app.js").headers["Cache-Control"] == "public, max-age=600")
        }
    }

    @Test func largeFilesAreServedWhole() throws {
        let tree = try Tree()
        let bytes = (0..<(StaticFiles.cachedFileLimit + 12_345)).map { UInt8(truncatingIfNeeded: $0 * 7) }
        try Data(bytes).write(to: URL(fileURLWithPath: tree.publicDirectory + "/big.bin"))
        let live = try Self.serve(tree)
        let client = live.client()
        for _ in 0..<2 {
            let response = try client.get("/big.bin")
            #expect(response.status == 200)
            #expect(response.body == bytes)
        }
    }

    @Test func headSendsHeadersOnly() throws {
        let tree = try Tree()
        let live = try Self.serve(tree)
        let client = live.client()
        let head = try client.send("HEAD", "/css/app.css")
        #expect(head.status == 200)
        #expect(head.headers["Content-Length"] == "15")
        #expect(head.headers["Content-Type"] == "text/css; charset=utf-8")
        #expect(head.body.isEmpty)
        #expect(try client.get("/css/app.css").text == "body{color:red}")
    }

    @Test func otherMethodsAre405() throws {
        let tree = try Tree()
        let live = try Self.serve(tree)
        let response = try live.client().send("POST", "/css/app.css")
        #expect(response.status == 405)
        #expect(response.headers["Allow"] == "GET, HEAD")
    }

    /// Every form of escaping the public directory: none may return the secret.
    @Test(arguments: [
        "/../secret.txt",
        "/css/../../secret.txt",
        "/%2e%2e/secret.txt",
        "/%2E%2E/secret.txt",
        "/.%2e/secret.txt",
        "/%2e%2e%2fsecret.txt",
        "/css%2f..%2f..%2fsecret.txt",
        "/..%2f..%2fsecret.txt",
        "/%2f..%2fsecret.txt",
        "/..\\secret.txt",
        "/..%5csecret.txt",
        "/%5c..%5csecret.txt",
        "/secret.txt%00.css",
        "/%00",
        "//etc/passwd",
        "/%2fetc%2fpasswd",
        "/etc/passwd",
        "http://127.0.0.1/../secret.txt",
        "/escape.txt",
        "/outside/secret.txt",
        "/.env",
        "/.%CC%81env",
        "/css/./app.css",
        "/%2e/css/app.css",
    ])
    func neverLeavesThePublicDirectory(target: String) throws {
        let tree = try Tree()
        let live = try Self.serve(tree)
        let response = try live.client().raw(
            Array("GET \(target) HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".utf8))
        let status = Int(response.split(separator: " ").dropFirst().first ?? "") ?? 0
        #expect(status == 404 || status == 400, "\(target) answered \(status)")
        #expect(!response.contains("top secret"))
        #expect(!response.contains("root:"))
        #expect(!response.contains("hidden"))
    }

    @Test func missingDirectoryIsAStartError() {
        #expect(throws: HTTPServerError.self) { try StaticFiles(directory: "/nonexistent/appshell-public") }
    }
}
