import AppShellHTTP
import Glibc

/// One TCP connection to 127.0.0.1 (`ClientConnection`) with a read buffer and a 60-second receive
/// timeout: only an upper bound (a read returns as soon as its bytes arrive), generous for a
/// loaded machine. With `TestTLS`, the bytes go through a TLS session.
final class TestConnection {
    private let connection: ClientConnection
    private var buffer: [UInt8] = []
    /// The bytes received so far.
    private(set) var received = 0

    /// The TLS session the bytes go through, when the server speaks HTTPS.
    var tls: TLSClientSession? { connection.tls }

    /// Connects to 127.0.0.1:`port`; `receiveBufferBytes` fixes the socket's receive buffer (set
    /// before connecting, so the kernel does not grow it) for a client that reads slowly; `source`
    /// is the loopback address to connect from (a client of its own to the server's per-address
    /// limits: any of 127.0.0.0/8), `timeoutSeconds` bounds each read and write.
    init(
        port: Int, receiveBufferBytes: Int? = nil, source: String? = nil, timeoutSeconds: Int = 60,
        tls: TestTLS? = nil
    ) throws {
        let session = (tls ?? TestTLS.registered(port: port)).map {
            (trustFile: Optional($0.trustFile), serverName: $0.serverName, priorities: $0.priorities)
        }
        connection = try Self.translating { () throws(ClientConnectionError) in
            try ClientConnection(
                port: port, timeoutSeconds: timeoutSeconds, receiveBufferBytes: receiveBufferBytes, source: source,
                tls: session)
        }
    }

    /// `body`, with a failure of the connection thrown as the tests' client error.
    private static func translating<T>(_ body: () throws(ClientConnectionError) -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw TestClientError(description: error.description)
        }
    }

    func write(_ bytes: [UInt8]) throws {
        try Self.translating { () throws(ClientConnectionError) in try connection.send(bytes) }
    }

    /// Reads more bytes into the buffer; false at end of stream.
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = try Self.translating { () throws(ClientConnectionError) in try connection.receive(into: &chunk) }
        guard count > 0 else { return false }
        buffer.append(contentsOf: chunk[0..<count])
        received += count
        return true
    }

    /// Reads until `marker` has arrived and returns everything up to and including it.
    func read(through marker: [UInt8]) throws -> [UInt8] {
        while true {
            if let range = buffer.firstRange(of: marker) {
                defer { buffer.removeSubrange(..<range.upperBound) }
                return Array(buffer[..<range.upperBound])
            }
            guard try fill() else { throw TestClientError(description: "connection closed before the marker") }
        }
    }

    func readToEnd() throws -> [UInt8] {
        while try fill() {}
        defer { buffer = [] }
        return buffer
    }

    private func readLine() throws -> String {
        while true {
            if let end = buffer.firstIndex(of: 0x0A) {
                var line = Array(buffer[..<end])
                buffer.removeSubrange(...end)
                if line.last == 0x0D { line.removeLast() }
                return String(decoding: line, as: UTF8.self)
            }
            guard try fill() else { throw TestClientError(description: "connection closed mid-response") }
        }
    }

    /// Reads exactly `count` bytes (after any already read past a marker).
    func readBytes(_ count: Int) throws -> [UInt8] {
        while buffer.count < count {
            guard try fill() else { throw TestClientError(description: "connection closed mid-body") }
        }
        defer { buffer.removeSubrange(0..<count) }
        return Array(buffer[0..<count])
    }

    func readResponse(method: String) throws -> TestResponse {
        let statusLine = try readLine()
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
            throw TestClientError(description: "malformed status line: \(statusLine)")
        }
        var headers = HTTPHeaders()
        while true {
            let line = try readLine()
            if line.isEmpty { break }
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.add(
                name: String(line[..<colon]),
                value: String(line[line.index(after: colon)...].drop { $0 == " " }))
        }
        var body: [UInt8] = []
        if method == "HEAD" || status == 204 || status == 304 || (100..<200).contains(status) {
            body = []
        } else if headers["Transfer-Encoding"]?.lowercased() == "chunked" {
            while true {
                let sizeLine = try readLine()
                guard let size = Int(sizeLine.split(separator: ";").first ?? "", radix: 16) else {
                    throw TestClientError(description: "malformed chunk size \(sizeLine)")
                }
                if size == 0 {
                    while try !readLine().isEmpty {}
                    break
                }
                body += try readBytes(size)
                _ = try readLine()
            }
        } else if let length = headers["Content-Length"].flatMap({ Int($0) }) {
            body = try readBytes(length)
        } else {
            body = try readToEnd()
        }
        return TestResponse(status: status, headers: headers, body: body)
    }
}
