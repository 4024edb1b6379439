import CMicroHTTPD  // its shim includes <sys/socket.h> (with GnuTLS): the socket constants come with it
import Glibc

/// The server's listening socket, made before its daemons so that every event loop's daemon
/// accepts from the one socket (as libmicrohttpd's own thread pool does) and the port is known
/// before any of them starts.
struct ListeningSocket: Sendable {
    /// The socket's descriptor.
    let descriptor: Int32
    /// The bound port (the one the system picked when asked for port 0).
    let port: Int
    /// Whether the socket is an IPv6 one (libmicrohttpd is told so).
    let isIPv6: Bool

    /// Binds `host:port` and listens with room for `backlog` connections not accepted yet;
    /// throws when the address is not a literal, in use, or not allowed.
    init(host: String, port: Int, backlog: Int32) throws(HTTPServerError) {
        var storage = sockaddr_storage()
        guard SocketAddress.fill(&storage, host: host, port: port) else {
            throw HTTPServerError("host \(host) is not an IPv4 or IPv6 address")
        }
        let family = Int32(storage.ss_family)
        let socket = Glibc.socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { throw HTTPServerError("could not make a socket: \(String(cString: strerror(errno)))") }
        var on: Int32 = 1
        // Restarting on the port of a server that just stopped (its connections in TIME_WAIT)
        // must work, as with libmicrohttpd's own listening sockets.
        _ = setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        if family == AF_INET6 {
            // `::` means IPv6 only, as libmicrohttpd has it without its dual-stack flag.
            _ = setsockopt(socket, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &on, socklen_t(MemoryLayout<Int32>.size))
        }
        let length = socklen_t(family == AF_INET6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) }
        }
        guard bound == 0, listen(socket, backlog) == 0 else {
            _ = Glibc.close(socket)
            throw HTTPServerError("could not listen on \(host):\(port) (address in use, or not allowed)")
        }
        var actual = sockaddr_storage()
        var actualLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &actualLength) }
        }
        descriptor = socket
        isIPv6 = family == AF_INET6
        self.port = withUnsafeBytes(of: &actual) { raw in
            // sin_port and sin6_port are at the same offset, in network order.
            Int(UInt16(bigEndian: raw.load(fromByteOffset: 2, as: UInt16.self)))
        }
    }

    /// Closes the socket (after every daemon let go of it).
    func close() { _ = Glibc.close(descriptor) }
}
