import AppShell

@testable import AppShellHTTP

/// The request line's method and target, as `Request.parse` splits them for every request.
public enum RequestTargetFuzz {
    /// `METHOD target` (or the target alone, as GET). A target that parses gives NUL-free
    /// segments and pairs, and the target rebuilt from them (each part percent-encoded) parses
    /// to the same segments and pairs; one that does not is a 400 (or 501 for CONNECT).
    public static func run(_ data: [UInt8]) {
        let text = FuzzCheck.cString(data)
        var method = HTTPMethod.get
        var target = text
        if let space = text.firstIndex(of: " ") {
            method = HTTPMethod(rawValue: String(text[..<space]))
            target = String(text[text.index(after: space)...])
        }
        let parts: Request.Parts
        do {
            parts = try Request.parse(method: method, target: target)
        } catch {
            FuzzCheck.require([400, 501].contains(error.status.rawValue), "unexpected status \(error.status)")
            return
        }
        for part in parts.segments + parts.query.flatMap({ [$0.name, $0.value] }) {
            FuzzCheck.require(!part.utf8.contains(0), "a decoded part holds NUL")
        }
        // A `next` value the shell would open: a path on this site, whatever its bytes.
        for value in parts.query.map(\.value) where Shell.isSameSitePath(value) {
            let bytes = Array(value.utf8)
            FuzzCheck.require(
                bytes.first == UInt8(ascii: "/") && (bytes.count < 2 || !"/\\".utf8.contains(bytes[1]))
                    && !bytes.contains(UInt8(ascii: "\\")),
                "\(value.debugDescription) is taken for a path on this site")
        }
        var rebuilt = "/" + parts.segments.map(PercentEncoding.encode).joined(separator: "/")
        if !parts.query.isEmpty {
            rebuilt +=
                "?"
                + parts.query.map { PercentEncoding.encode($0.name) + "=" + PercentEncoding.encode($0.value) }
                .joined(separator: "&")
        }
        guard let again = try? Request.parse(method: .get, target: rebuilt) else {
            FuzzCheck.require(false, "the rebuilt target \(rebuilt) does not parse")
            return
        }
        FuzzCheck.require(again.segments == parts.segments, "segments differ after a round trip: \(rebuilt)")
        FuzzCheck.require(
            again.query.map(\.name) == parts.query.map(\.name) && again.query.map(\.value) == parts.query.map(\.value),
            "query pairs differ after a round trip: \(rebuilt)")
        // The whole request: an absolute-form target's origin form and authority.
        guard let request = try? Request(method: method, target: target) else {
            FuzzCheck.require(false, "Request refuses a target parse accepted")
            return
        }
        FuzzCheck.require(request.pathSegments == parts.segments, "Request's segments differ from parse's")
        FuzzCheck.require(
            request.target.utf8.first == UInt8(ascii: "/"), "the origin form \(request.target) does not begin with /")
        // The origin form (what handlers and logs see as the target) names the same path and query.
        let origin = try? Request.parse(method: .get, target: request.target)
        FuzzCheck.require(
            origin?.segments == parts.segments, "the origin form \(request.target) names another path than the target")
        if let absolute = parts.absolute {
            FuzzCheck.require(request.host == absolute.authority, "the absolute form's host is not the Host field")
        }
    }
}
