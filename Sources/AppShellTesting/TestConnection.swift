import AppShellHTTP
import CMicroHTTPD  // the socket constants (see ListeningSocket)
import Glibc

/// One TCP connection to 127.0.0.1 with a read buffer and a 60-second receive timeout: only an
/// upper bound (a read returns as soon as its bytes arrive), generous for a loaded machine. With
/// `TestTLS`, the bytes go through a TLS session.
final class TestConnection {
    private let descriptor: Int32
    /// The TLS session the bytes go through, when the server speaks HTTPS.
    private(set) var tls: TLSClientSession?
    private var buffer: [UInt8] = []
    /// The bytes received so far.
    private(set) var received = 0

    /// Connects to 127.0.0.1:`port`; `receiveBufferBytes` fixes the socket's receive buffer (set
    /// before connecting, so the kernel does not grow it) for a client that reads slowly; `source`
    /// is the loopback address to connect from (a client of its own to the server's per-address
    /// limits: any of 127.0.0.0/8), `timeoutSeconds` bounds each read and write.
    init(
        port: Int, receiveBufferBytes: Int? = nil, source: String? = nil, timeoutSeconds: Int = 60,
        tls: TestTLS? = nil
    ) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw TestClientError(description: "socket() failed: errno \(errno)") }
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            guard inet_pton(AF_INET, source, &local.sin_addr) == 1 else {
                throw TestClientError(description: "not an IPv4 address: \(source)")
            }
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0 else { throw TestClientError(description: "bind to \(source) failed: errno \(errno)") }
        }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        if var bytes = receiveBufferBytes.map(Int32.init) {
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &bytes, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            // No close here: the object is fully initialised, so throwing runs `deinit`, which
            // closes the socket (closing it twice could close another thread's new socket).
            throw TestClientError(description: "connect to port \(port) failed: errno \(errno)")
        }
        if let tls = tls ?? TestTLS.registered(port: port) {
            self.tls = try TLSClientSession(
                descriptor: descriptor, trustFile: tls.trustFile, serverName: tls.serverName, priorities: tls.priorities
            )
        }
    }

    deinit { if descriptor >= 0 { Glibc.close(descriptor) } }

    func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes {
                tls?.send($0.baseAddress! + offset, count: $0.count - offset)
                    ?? Glibc.send(descriptor, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent < 0 {
                if errno == EINTR { continue }
                throw TestClientError(description: "send failed: errno \(errno)")
            }
            offset += sent
        }
    }

    /// Reads more bytes into the buffer; false at end of stream.
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count =
                try tls.map { tls in
                    try chunk.withUnsafeMutableBytes { try tls.receive(into: $0.baseAddress!, count: $0.count) }
                }
                ?? recv(descriptor, &chunk, chunk.count, 0)
            if count > 0 {
                buffer.append(contentsOf: chunk[0..<count])
                received += count
                return true
            }
            if count == 0 { return false }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { throw TestClientError(description: "read timed out") }
            if errno == ECONNRESET { return false }
            throw TestClientError(description: "recv failed: errno \(errno)")
        }
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
