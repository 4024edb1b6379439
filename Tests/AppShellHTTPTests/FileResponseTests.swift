import AppShellTesting
import Foundation
import Glibc
import Testing

@testable import AppShellHTTP

/// The descriptor of a file response is closed exactly once, whether libmicrohttpd could make a
/// response of it or not.
@Suite struct FileResponseTests {
    /// How many of this process's descriptors are open on `path` now (from /proc/self/fd: other
    /// tests running at the same time open other files, never this one).
    static func openDescriptors(on path: String) -> Int {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return entries.filter {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)) == path
        }
        .count
    }

    @Test func aFileResponseThatCannotBeMadeClosesItsDescriptor() throws {
        let path = NSTemporaryDirectory() + "appshell-fd-" + UUID().uuidString
        try "content".write(toFile: path, atomically: true, encoding: .utf8)
        defer { unlink(path) }
        var router = Router()
        router.get("/file") { _ in
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            // A size libmicrohttpd refuses (it takes sizes as signed 64-bit): no response is made.
            return Response(body: .file(OpenFile(descriptor: descriptor, size: -1)))
        }
        router.get("/ok") { _ in .text("ok") }
        let live = try LiveServer(responder: router)
        for _ in 0..<3 { _ = try? live.client().get("/file") }
        #expect(eventually { Self.openDescriptors(on: path) == 0 }, "\(Self.openDescriptors(on: path)) left open")
        #expect(try live.client().get("/ok").status == 200)
    }

    @Test func aSentFileResponseClosesItsDescriptor() throws {
        let path = NSTemporaryDirectory() + "appshell-fd-" + UUID().uuidString
        try "content".write(toFile: path, atomically: true, encoding: .utf8)
        defer { unlink(path) }
        var router = Router()
        router.get("/file") { _ in
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            return Response(body: .file(OpenFile(descriptor: descriptor, size: 7)))
        }
        let live = try LiveServer(responder: router)
        #expect(try live.client().get("/file").text == "content")
        #expect(try live.client().send("HEAD", "/file").headers["Content-Length"] == "7")
        #expect(eventually { Self.openDescriptors(on: path) == 0 })
    }
}
