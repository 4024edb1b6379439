import AppShell
import AppShellConcurrency
import AppShellHTTP
import AppShellTesting
import Glibc

/// A slow local service for the awaiting actions' tests: an HTTP server on a free port whose
/// `GET /answer` waits until the test says `answer(with:)`. It counts the requests waiting and
/// those whose client went away (the action's task cancelled its request).
final class SlowService: Sendable {
    /// Plain HTTP whatever the suite speaks (`make test-tls`): it stands for another service of
    /// the app's, which the app's work reaches over a socket of its own.
    private let server: HTTPServer
    private let waiting = Locked<[PendingResponse]>([])
    /// Requests whose client closed the connection before they were answered.
    let abandoned = Locked(0)

    /// Starts the service.
    init() throws {
        var router = Router()
        let waiting = waiting
        let abandoned = abandoned
        router.get("/answer") { _ in
            let pending = PendingResponse()
            pending.onCancel { abandoned.withLock { $0 += 1 } }
            waiting.withLock { $0.append(pending) }
            return .deferred(pending)
        }
        var configuration = LiveServer.testConfiguration
        configuration.host = "127.0.0.1"
        configuration.port = 0
        server = HTTPServer(configuration: configuration, responder: router)
        try server.start()
    }

    /// The port it listens on.
    var port: Int { server.port }

    /// Requests waiting for their answer now.
    var waitingCount: Int { waiting.withLock { $0.count { !$0.isAnswered } } }

    /// Answers every waiting request with `text`.
    func answer(with text: String) {
        for pending in waiting.withLock({ list in
            defer { list = [] }
            return list
        }) {
            pending.fulfil(.text(text))
        }
    }

    /// Stops it.
    func stop() {
        answer(with: "stopped")
        _ = server.shutdown(timeoutSeconds: 5)
    }

    /// Asks `GET /answer` of the service on `port` and returns the body, awaiting it as an app
    /// awaits a blocking driver: the read waits on a thread of its own, not on Swift concurrency's,
    /// and cancelling the task shuts the socket down (the read ends, this throws
    /// `CancellationError`).
    static func fetch(port: Int) async throws -> String {
        let socket = SocketBox()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<String, any Error>) in
                let thread = BackgroundThread {
                    let body = socket.exchange(port: port)
                    if Task.isCancelled || socket.wasShutDown || body == nil {
                        continuation.resume(throwing: CancellationError())
                    } else {
                        continuation.resume(returning: body ?? "")
                    }
                }
                thread.start()
            }
        } onCancel: {
            socket.shutDown()
        }
    }
}

/// A socket that a cancellation may shut down from another thread while its owner reads it.
private final class SocketBox: Sendable {
    private let state = Locked<(descriptor: Int32, shutDown: Bool)>((-1, false))

    var wasShutDown: Bool { state.withLock { $0.shutDown } }

    /// Shuts the socket down (now, or as soon as it is opened).
    func shutDown() {
        state.withLock { state in
            state.shutDown = true
            if state.descriptor >= 0 { _ = Glibc.shutdown(state.descriptor, Int32(SHUT_RDWR)) }
        }
    }

    /// Connects to 127.0.0.1:`port`, asks `GET /answer` and returns the answer's body (`nil`
    /// when the connection failed or was shut down).
    func exchange(port: Int) -> String? {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        let open = state.withLock { state -> Bool in
            state.descriptor = descriptor
            return !state.shutDown
        }
        defer {
            state.withLock { state in
                Glibc.close(state.descriptor)
                state.descriptor = -1
            }
        }
        guard open else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { return nil }
        let request = Array("GET /answer HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".utf8)
        guard write(descriptor, request, request.count) == request.count else { return nil }
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(descriptor, &chunk, chunk.count)
            if count <= 0 { break }
            received += chunk[0..<count]
        }
        let text = String(decoding: received, as: UTF8.self)
        guard text.hasPrefix("HTTP/1.1 200"), let split = text.range(of: "\r\n\r\n") else { return nil }
        return String(text[split.upperBound...])
    }
}
