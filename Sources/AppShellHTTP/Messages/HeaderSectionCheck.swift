import CMicroHTTPD
import Glibc

// libmicrohttpd 0.9.75 reads a request's head leniently, and what it lets through can be read
// differently by a proxy in front of the server (request smuggling, RFC 9112 §11.2): it skips
// extra spaces after the method, keeps a name with a space in it (`Transfer-Encoding : chunked`
// becomes a field named "Transfer-Encoding " that frames nothing), keeps control bytes in values,
// uses the first of several `Content-Length` fields, appends an obs-fold continuation line to the
// field's *name*, and measures values with strlen, dropping what follows a NUL byte.
//
// It parses the head in place: the request line and each field line stay where they arrived, their
// CR LF (or bare LF) and each field's colon overwritten by NUL bytes, and the parsed fields point
// into that buffer in the order received. So one pass over the fields it already built tells what
// it dropped: the bytes between one line's end and the next field's name, and between the last
// field's end and the end of the header section, are nothing but those NUL bytes, unless a line was
// folded or held a NUL. The pass allocates nothing: it runs for every request.

/// The verdict of one pass over a request's header fields, in the order libmicrohttpd parsed them.
struct HeaderSectionCheck {
    /// The answer when the section is refused.
    private(set) var refusal: HTTPError?
    /// The NUL byte that ended the previous line (the request line's, at first).
    private var lineEnd: UnsafePointer<CChar>
    /// The byte after the header section's empty line.
    private let sectionEnd: UnsafePointer<CChar>
    /// The value every `Content-Length` field declared (all must agree).
    private var contentLength: UInt64?
    private var hosts = 0

    init(requestLineEnd: UnsafePointer<CChar>, sectionEnd: UnsafePointer<CChar>) {
        lineEnd = requestLineEnd
        self.sectionEnd = sectionEnd
    }

    /// Whether `start` is where the line after the one ending at `end` begins: one NUL for a bare
    /// LF, two for CR LF.
    private static func follows(_ start: UnsafePointer<CChar>, _ end: UnsafePointer<CChar>) -> Bool {
        start == end + 1 || (end[1] == 0 && start == end + 2)
    }

    /// Takes one field; false once the section is refused (the pass stops).
    mutating func take(
        name: UnsafePointer<CChar>, nameCount: Int, value: UnsafePointer<CChar>, valueCount: Int
    ) -> Bool {
        if !Self.follows(name, lineEnd) { return refuse(.badRequest(droppedBytes(before: name))) }
        lineEnd = value + valueCount
        let nameBytes = UnsafeRawPointer(name).assumingMemoryBound(to: UInt8.self)
        guard nameCount > 0, (0..<nameCount).allSatisfy({ Self.isTokenByte(nameBytes[$0]) }) else {
            return refuse(
                .badRequest("a header field name must be a token: no spaces in it and none before its colon"))
        }
        let valueBytes = UnsafeRawPointer(value).assumingMemoryBound(to: UInt8.self)
        for index in 0..<valueCount {
            let byte = valueBytes[index]
            if (byte < 0x20 && byte != 0x09) || byte == 0x7F {
                return refuse(.badRequest("a header field value must not contain control characters such as CR"))
            }
        }
        switch nameCount {
        case 4 where strncasecmp(name, "Host", 4) == 0:
            hosts += 1
            if hosts > 1 { return refuse(.badRequest("a request must carry one Host field, not several")) }
        case 14 where strncasecmp(name, "Content-Length", 14) == 0:
            return takeContentLength(UnsafeBufferPointer(start: valueBytes, count: valueCount))
        default: break
        }
        return true
    }

    /// Takes the end of the header section, after the last field.
    mutating func finish() {
        guard refusal == nil else { return }
        // The last line's terminator and the empty line's: two to four NUL bytes.
        let count = sectionEnd - lineEnd
        if count < 2 || count > 4 || (0..<count).contains(where: { lineEnd[$0] != 0 }) {
            refusal = .badRequest(droppedBytes(before: nil))
        }
    }

    /// The message for bytes libmicrohttpd dropped after the line that ended at `lineEnd`, before
    /// the field `name` (`nil`: the section's end). A folded field's name was moved out of the
    /// section when libmicrohttpd appended the continuation to it; otherwise a NUL ended a value early.
    private func droppedBytes(before name: UnsafePointer<CChar>?) -> String {
        if let name, name < lineEnd || name >= sectionEnd {
            return "a header field line must not be continued on the next line (obs-fold, RFC 9112 §5.2)"
        }
        return "a header field line must not contain a NUL byte"
    }

    private mutating func takeContentLength(_ digits: UnsafeBufferPointer<UInt8>) -> Bool {
        var length: UInt64 = 0
        guard !digits.isEmpty else { return refuse(.badRequest("Content-Length must be a decimal number")) }
        for byte in digits {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else {
                return refuse(.badRequest("Content-Length must be a decimal number"))
            }
            let (times10, over1) = length.multipliedReportingOverflow(by: 10)
            let (sum, over2) = times10.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
            // libmicrohttpd takes UInt64.max as "length unknown" and reads to the connection's end.
            guard !over1, !over2, sum <= UInt64(Int.max) else {
                return refuse(HTTPError(.contentTooLarge, "the declared Content-Length is too large"))
            }
            length = sum
        }
        if let earlier = contentLength, earlier != length {
            // RFC 9112 §6.3: the framing is ambiguous; identical repeats are one (RFC 9110 §8.6).
            return refuse(.badRequest("a request must not carry Content-Length fields with different values"))
        }
        contentLength = length
        return true
    }

    private mutating func refuse(_ error: HTTPError) -> Bool {
        refusal = error
        return false
    }

    /// Whether `byte` may appear in a token (RFC 9110 §5.6.2).
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"):
            return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
            UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "."), UInt8(ascii: "^"),
            UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }
}

/// Hands each header field to the `HeaderSectionCheck` that `cls` points to.
private let fieldChecker: MHD_KeyValueIteratorN = { cls, _, name, nameCount, value, valueCount in
    guard let cls, let name, let value else { return .YES }
    let check = cls.assumingMemoryBound(to: HeaderSectionCheck.self)
    return check.pointee.take(name: name, nameCount: nameCount, value: value, valueCount: valueCount) ? .YES : .NO
}

extension HTTPServer {
    /// The answer to a request whose head this server will not read as it stands, or `nil`: a
    /// request line that is not `method SP target SP version` with single spaces and a visible
    /// ASCII target, or a header section with a field name that is no token, a control byte or NUL
    /// in a value, a folded line, several `Host` fields, or `Content-Length` fields that are not
    /// one decimal length (RFC 9112 §3, §5, §6.3). The connection closes after the answer.
    func refuseHead(
        _ connection: OpaquePointer, _ pending: PendingRequest, method: UnsafePointer<CChar>,
        url: UnsafePointer<CChar>, version: UnsafePointer<CChar>
    ) -> Response? {
        var refusal: HTTPError?
        // The method ends at the first space and the target at the last one (libmicrohttpd skips
        // any further spaces); `pending.target` is the target up to a NUL, with invalid UTF-8 repaired.
        let target = pending.target.utf8
        if url != method + strlen(method) + 1 || version != url + target.count + 1
            || !target.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        {
            refusal = .badRequest(
                "the request line must be a method, a target of visible ASCII and a version, one space apart")
        } else {
            // The size is known from the moment the section was read, before this first call.
            let size = appshell_mhd_header_size(connection)
            var check = HeaderSectionCheck(requestLineEnd: version + strlen(version), sectionEnd: method + size)
            _ = withUnsafeMutablePointer(to: &check) {
                MHD_get_connection_values_n(connection, .HEADER_KIND, fieldChecker, $0)
            }
            check.finish()
            refusal = check.refusal
        }
        guard let refusal else { return nil }
        var response = Response.error(refusal, for: nil)
        response.headers.add(name: "Connection", value: "close")
        return response
    }
}
