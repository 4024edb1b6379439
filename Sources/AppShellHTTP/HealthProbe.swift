import CMicroHTTPD
import Glibc

/// `GET /healthz` sent to a server of this machine, over TLS when it speaks HTTPS: what a
/// container's health check runs (`appshell health`), with no `curl` in the image and whatever the
/// server's allowed hosts (the request names none).
///
/// Over TLS the server's certificate is not checked: the probe asks whether the process on this
/// port answers, and a certificate for the site's name does not name 127.0.0.1.
public enum HealthProbe {
    /// Whether the server on `port` of the loopback interface answers `GET /healthz` with
    /// `{"status":"ok"}` within `timeoutSeconds`; the reason when not.
    public static func check(port: Int, tls: Bool, timeoutSeconds: Int = 3) -> (healthy: Bool, reason: String) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return (false, "socket() failed: \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(clamping: port).bigEndian)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            return (false, "nothing answers on 127.0.0.1:\(port): \(String(cString: strerror(errno)))")
        }
        let request = Array("GET /healthz HTTP/1.0\r\n\r\n".utf8)
        var answer: [UInt8] = []
        if tls {
            guard let exchanged = exchangeOverTLS(descriptor, request) else {
                return (false, "no TLS answer on 127.0.0.1:\(port)")
            }
            answer = exchanged
        } else {
            guard send(descriptor, request, request.count, Int32(MSG_NOSIGNAL)) == request.count else {
                return (false, "cannot send to 127.0.0.1:\(port)")
            }
            var chunk = [UInt8](repeating: 0, count: 4096)
            while answer.count < 65_536 {
                let count = recv(descriptor, &chunk, chunk.count, 0)
                if count <= 0 { break }
                answer += chunk[0..<count]
            }
        }
        let text = String(decoding: answer, as: UTF8.self)
        guard text.hasPrefix("HTTP/1.1 200") || text.hasPrefix("HTTP/1.0 200"), text.contains(#""status":"ok""#) else {
            return (false, "127.0.0.1:\(port) answered: \(text.prefix(80).split(separator: "\r\n").first ?? "nothing")")
        }
        return (true, "ok")
    }

    /// Sends `request` over a TLS session on `descriptor` and reads the answer to its end; `nil`
    /// when the handshake fails.
    private static func exchangeOverTLS(_ descriptor: Int32, _ request: [UInt8]) -> [UInt8]? {
        var credentials: OpaquePointer?
        guard gnutls_certificate_allocate_credentials(&credentials) == GNUTLS_E_SUCCESS, let credentials else {
            return nil
        }
        defer { gnutls_certificate_free_credentials(credentials) }
        var session: OpaquePointer?
        guard gnutls_init(&session, UInt32(GNUTLS_CLIENT)) == GNUTLS_E_SUCCESS, let session else { return nil }
        defer { gnutls_deinit(session) }
        gnutls_set_default_priority(session)
        gnutls_credentials_set(session, GNUTLS_CRD_CERTIFICATE, UnsafeMutableRawPointer(credentials))
        gnutls_transport_set_int2(session, descriptor, descriptor)
        var status: Int32
        repeat { status = gnutls_handshake(session) } while status < 0 && gnutls_error_is_fatal(status) == 0
        guard status >= 0 else { return nil }
        guard request.withUnsafeBytes({ gnutls_record_send(session, $0.baseAddress, $0.count) }) == request.count
        else { return nil }
        var answer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while answer.count < 65_536 {
            let count = chunk.withUnsafeMutableBytes { gnutls_record_recv(session, $0.baseAddress, $0.count) }
            if count == GNUTLS_E_INTERRUPTED { continue }
            if count <= 0 { break }
            answer += chunk[0..<count]
        }
        return answer
    }
}
