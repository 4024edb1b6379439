import CMicroHTTPD  // the socket constants (see ListeningSocket) and GnuTLS
import Glibc

/// Why a client connection failed, in words.
package struct ClientConnectionError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    package let description: String

    package init(_ description: String) { self.description = description }
}

/// The client side of one TCP connection to this machine's loopback interface, plain or through
/// a TLS session: what `appshell health` and the tests' clients send their requests over.
package final class ClientConnection {
    private let descriptor: Int32
    /// The TLS session the bytes go through, when the server speaks HTTPS.
    package private(set) var tls: TLSClientSession?

    /// Connects to 127.0.0.1:`port`. `timeoutSeconds` bounds each read and write;
    /// `receiveBufferBytes` fixes the socket's receive buffer (set before connecting, so the
    /// kernel does not grow it) for a client that reads slowly; `source` is the loopback address
    /// to connect from (any of 127.0.0.0/8); `tls` shakes hands before any byte is sent.
    package init(
        port: Int, timeoutSeconds: Int, receiveBufferBytes: Int? = nil, source: String? = nil,
        tls: (trustFile: String?, serverName: String, priorities: String?)? = nil
    ) throws(ClientConnectionError) {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw ClientConnectionError("socket() failed: \(Self.lastError)") }
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            guard inet_pton(AF_INET, source, &local.sin_addr) == 1 else {
                throw ClientConnectionError("not an IPv4 address: \(source)")
            }
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0 else { throw ClientConnectionError("bind to \(source) failed: \(Self.lastError)") }
        }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        if var bytes = receiveBufferBytes.map(Int32.init) {
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &bytes, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(clamping: port).bigEndian)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        // No close when throwing: the object is fully initialised, so `deinit` closes the socket
        // (closing it twice could close another thread's new socket).
        guard connected == 0 else {
            throw ClientConnectionError("nothing answers on 127.0.0.1:\(port): \(Self.lastError)")
        }
        if let tls {
            self.tls = try TLSClientSession(
                descriptor: descriptor, trustFile: tls.trustFile, serverName: tls.serverName,
                priorities: tls.priorities)
        }
    }

    deinit { if descriptor >= 0 { close(descriptor) } }

    /// Sends all of `bytes`.
    package func send(_ bytes: [UInt8]) throws(ClientConnectionError) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes {
                tls?.send($0.baseAddress! + offset, count: $0.count - offset)
                    ?? Glibc.send(descriptor, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent < 0 {
                if errno == EINTR { continue }
                throw ClientConnectionError("send failed: \(Self.lastError)")
            }
            offset += sent
        }
    }

    /// Receives up to `chunk.count` bytes into `chunk`: their number, 0 at the end of the stream
    /// (a reset counts as one), or throws (a read that timed out, a TLS error).
    package func receive(into chunk: inout [UInt8]) throws(ClientConnectionError) -> Int {
        if let tls {
            let received = chunk.withUnsafeMutableBytes { bytes in
                Result { () throws(ClientConnectionError) in
                    try tls.receive(into: bytes.baseAddress!, count: bytes.count)
                }
            }
            return try received.get()
        }
        while true {
            let count = recv(descriptor, &chunk, chunk.count, 0)
            if count >= 0 { return count }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: throw ClientConnectionError("read timed out")
            case ECONNRESET: return 0
            default: throw ClientConnectionError("recv failed: \(Self.lastError)")
            }
        }
    }

    /// Everything the server sends until it closes, up to `limit` bytes.
    package func receiveToEnd(limit: Int) throws(ClientConnectionError) -> [UInt8] {
        var answer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while answer.count < limit {
            let count = try receive(into: &chunk)
            if count == 0 { break }
            answer += chunk[0..<count]
        }
        return answer
    }

    private static var lastError: String { String(cString: strerror(errno)) }
}
