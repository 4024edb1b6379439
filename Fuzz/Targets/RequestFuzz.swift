import AppShellDemo
import FoundationEssentials

@testable import AppShellHTTP

/// Whole requests through the demo's responder (routes, pages, the API, static files): the
/// first line is `METHOD target`, then `Name: value` header lines, then an empty line and the body.
/// The harness adds the session's cookie and a `Host`.
public enum RequestFuzz {
    private static let publicDirectory = ShellHarness.shared.app.configuration.publicDirectory
    private static let routes = Set(ShellHarness.shared.router.routeList.map(\.path))

    /// Every answer is a documented status (never a 5xx but 501 and 503), and a file is served
    /// only from inside the public directory, for segments `StaticFiles` calls safe.
    public static func run(_ data: [UInt8]) {
        let harness = ShellHarness.shared
        var lines = FuzzCheck.lines(data)[...]
        guard let requestLine = lines.popFirst() else { return }
        let text = FuzzCheck.cString(requestLine)
        guard let space = text.firstIndex(of: " ") else { return }
        let method = HTTPMethod(rawValue: String(text[..<space]))
        let target = String(text[text.index(after: space)...])
        var headers = HTTPHeaders()
        while let line = lines.popFirst(), !line.isEmpty {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { continue }
            let name = Array(line[..<colon])
            let value = Array(line[(colon + 1)...].drop { $0 == UInt8(ascii: " ") })
            name.withUnsafeBufferPointer { name in
                value.withUnsafeBufferPointer { value in headers.receive(name: name, value: value) }
            }
        }
        let body = Array(lines.joined(separator: [UInt8(ascii: "\n")]))
        let status = harness.respond(method: method, target: target, headers: headers, body: body)
        FuzzCheck.require(status != 500, "status 500 for \(method) \(target)")
        guard status == 200 || status == 304, method == .get || method == .head,
            let request = try? Request(method: method, target: target), !routes.contains(request.path)
        else { return }
        FuzzCheck.require(
            request.pathSegments.allSatisfy { segment in
                segment.utf8.first != UInt8(ascii: ".") && !segment.utf8.contains { "/\\\0".utf8.contains($0) }
            }, "a file was served for the unsafe path \(request.path.debugDescription)")
        let file = publicDirectory + "/" + request.pathSegments.joined(separator: "/")
        var isDirectory: Bool = false
        FuzzCheck.require(
            FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory) && !isDirectory,
            "\(request.path) was answered \(status) but \(file) is no file")
    }
}
