import AppShellConcurrency
import CHiredis

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A random name for this process among the instances sharing a Redis server (12 hex digits):
/// what the relay marks its messages with and the stream ledger its places.
func randomInstanceName() -> String {
    var generator = SystemRandomNumberGenerator()
    return String((0..<12).map { _ in "0123456789abcdef".randomElement(using: &generator)! })
}

/// One connection to a Redis server, over hiredis's blocking API: the only code in the module
/// that holds a `redisContext`.
///
/// hiredis's context is not thread-safe: the owner serialises every use behind its own lock
/// (`RedisDefaultsBackend` keeps its connections in `Locked`). Every command waits at most
/// `timeoutMilliseconds` for its reply. A connection that failed (the server went away, a
/// timeout) is dropped, and the next command connects again, so a restarted server is used again
/// without restarting the process; the command that met the failure throws — its effect unknown
/// to the caller, who answers 503.
final class RedisConnection {
    /// Where the server is.
    let url: RedisURL
    /// How long a connect or a command may take.
    let timeoutMilliseconds: Int
    /// Whether a read waits for a reply as long as it takes (a subscriber's connection, which
    /// waits for the next message).
    let waitsForever: Bool
    /// The scripts this connection's commands call (`EVALSHA`): loaded when it connects, and
    /// again when the server has lost them.
    let scripts: [RedisScript]
    private(set) var context: UnsafeMutablePointer<redisContext>?
    private var closed = false
    /// The socket, for `interrupt` from another thread (-1: none). Closed holding this lock, so
    /// that `interrupt` never shuts down a descriptor the system has given to another file since.
    let socket = Locked<Int32>(-1)

    /// Connects to `url` (logging in and selecting its database); throws when that fails. A
    /// connection that `waitsForever` has no time limit on reads (`timeoutMilliseconds` still
    /// bounds the connect). `scripts` are those its commands call by their SHA-1.
    init(
        url: RedisURL, timeoutMilliseconds: Int = 2_000, waitsForever: Bool = false, scripts: [RedisScript] = []
    ) throws(StoreError) {
        self.url = url
        self.timeoutMilliseconds = max(1, timeoutMilliseconds)
        self.waitsForever = waitsForever
        self.scripts = scripts
        try connect()
    }

    /// The next reply the server sends — to a command sent before (`send`, `sendWithoutWaiting`),
    /// or without being asked (a subscriber's messages): waits for it; throws when the connection
    /// fails or is interrupted.
    func receive() throws(StoreError) -> RedisReply {
        guard let context else { throw failure("not connected") }
        var raw: UnsafeMutableRawPointer?
        guard redisGetReply(context, &raw) == REDIS_OK, let raw else {
            throw failed(context)
        }
        let reply = RedisConnection.copy(raw.assumingMemoryBound(to: redisReply.self))
        freeReplyObject(raw)
        return reply
    }

    deinit { close() }

    /// Closes the connection for good: every later command throws.
    func close() {
        closed = true
        drop()
    }

    /// Sends `arguments` as one command and returns its reply (an error reply too: the caller
    /// decides what it means).
    func command(_ arguments: [[UInt8]]) throws(StoreError) -> RedisReply {
        try pipeline([arguments])[0]
    }

    /// Sends `commands` at once and returns their replies in order: one round trip for all.
    ///
    /// A script the server no longer has (`NOSCRIPT`: it restarted or failed over without them,
    /// or they were flushed) ran nothing: the scripts are loaded again and the commands it
    /// refused sent again, in their order, once.
    func pipeline(_ commands: [[[UInt8]]]) throws(StoreError) -> [RedisReply] {
        var replies = try send(commands)
        let refused = replies.indices.filter { replies[$0].isMissingScript }
        guard !refused.isEmpty, !scripts.isEmpty else { return replies }
        try loadScripts()
        let again = try send(refused.map { commands[$0] })
        for (index, reply) in zip(refused, again) { replies[index] = reply }
        return replies
    }

    /// `commands` in one round trip, their replies as the server sent them.
    private func send(_ commands: [[[UInt8]]]) throws(StoreError) -> [RedisReply] {
        // A connection the server closed (it restarted, or closed an idle client) is made again
        // before anything is sent on it: sent, a write's fate would be unknown.
        if let context, RedisConnection.isClosed(context) { drop() }
        if context == nil { try connect() }
        guard let context else { throw failure("not connected") }
        for arguments in commands { try append(arguments, to: context) }
        var replies: [RedisReply] = []
        replies.reserveCapacity(commands.count)
        for _ in commands { replies.append(try receive()) }
        return replies
    }

    /// Connects now when not connected (or when the server closed the connection): a command
    /// sent next goes on a connection known to be open, so that a failure to reach the server is
    /// told apart — nothing was sent — from one that leaves a command's fate unknown.
    func connectIfNeeded() throws(StoreError) {
        if let context, RedisConnection.isClosed(context) { drop() }
        if context == nil { try connect() }
    }

    /// Puts `arguments`, one command, in `context`'s output buffer (sent by the next read or
    /// write of replies); a failure drops the connection.
    func append(_ arguments: [[UInt8]], to context: UnsafeMutablePointer<redisContext>) throws(StoreError) {
        // One buffer for all arguments, and their starts and lengths (binary-safe: no C strings).
        var buffer: [UInt8] = []
        buffer.reserveCapacity(arguments.reduce(0) { $0 + $1.count })
        var lengths: [Int] = []
        lengths.reserveCapacity(arguments.count)
        for argument in arguments {
            buffer.append(contentsOf: argument)
            lengths.append(argument.count)
        }
        let code = buffer.withUnsafeBufferPointer { bytes -> Int32 in
            var starts: [UnsafePointer<CChar>?] = []
            starts.reserveCapacity(arguments.count)
            var offset = 0
            let base = UnsafeRawPointer(bytes.baseAddress ?? UnsafePointer(bitPattern: 1)!)
            for length in lengths {
                starts.append((base + offset).assumingMemoryBound(to: CChar.self))
                offset += length
            }
            return starts.withUnsafeMutableBufferPointer { pointers in
                lengths.withUnsafeBufferPointer { sizes in
                    redisAppendCommandArgv(context, Int32(arguments.count), pointers.baseAddress, sizes.baseAddress)
                }
            }
        }
        guard code == REDIS_OK else { throw failed(context) }
    }

    /// Connects, logs in, selects the database and loads the scripts; throws when any fails.
    func connect() throws(StoreError) {
        guard !closed else { throw failure("closed (the server is stopping)") }
        let timeout = timeval(
            tv_sec: timeoutMilliseconds / 1000, tv_usec: Int(timeoutMilliseconds % 1000) * 1000)
        let made: UnsafeMutablePointer<redisContext>?
        switch url.address {
        case .tcp(let host, let port): made = redisConnectWithTimeout(host, Int32(port), timeout)
        case .unix(let path): made = redisConnectUnixWithTimeout(path, timeout)
        }
        guard let made else { throw failure("connect: out of memory") }
        guard made.pointee.err == 0 else {
            let error = failure("connect: " + RedisConnection.describe(made))
            redisFree(made)
            throw error
        }
        if !waitsForever { redisSetTimeout(made, timeout) }
        socket.withLock { $0 = made.pointee.fd }
        if case .tcp = url.address { _ = redisEnableKeepAlive(made) }
        context = made
        var login: [[[UInt8]]] = []
        if let password = url.password {
            login.append(
                [Array("AUTH".utf8)] + (url.username.map { [Array($0.utf8)] } ?? []) + [Array(password.utf8)])
        }
        if url.database != 0 { login.append([Array("SELECT".utf8), Array(String(url.database).utf8)]) }
        if !login.isEmpty {
            for reply in try send(login) {
                if case .error(let message) = reply {
                    drop()
                    throw failure(message.hasPrefix("WRONGPASS") ? "login refused: \(message)" : message)
                }
            }
        }
        try loadScripts()
    }

    /// Loads `scripts` on the server (`SCRIPT LOAD`, one round trip for all; the server keeps
    /// them until it restarts or flushes them).
    private func loadScripts() throws(StoreError) {
        guard !scripts.isEmpty else { return }
        let replies = try send(scripts.map { [Array("SCRIPT".utf8), Array("LOAD".utf8), $0.text] })
        for (reply, script) in zip(replies, scripts) where reply.bytes != script.sha {
            drop()
            throw failure("SCRIPT LOAD: \(reply)")
        }
    }

    /// Whether the server has closed `context`'s socket (or sent what nobody asked for): it is
    /// readable while no reply is awaited. One `poll` without waiting.
    private static func isClosed(_ context: UnsafeMutablePointer<redisContext>) -> Bool {
        var descriptor = pollfd(fd: context.pointee.fd, events: Int16(POLLIN) | 0x2000, revents: 0)  // POLLRDHUP
        return poll(&descriptor, 1, 0) != 0
    }

    private func drop() {
        socket.withLock { descriptor in
            descriptor = -1
            if let context { redisFree(context) }
        }
        context = nil
    }

    /// An error about this connection saying `what`, naming the server (without its password).
    func failure(_ what: String) -> StoreError {
        StoreError("store \(url): \(what)")
    }

    /// What went wrong on `context`, as an error to throw; the connection is dropped first (the
    /// next command connects again).
    func failed(_ context: UnsafeMutablePointer<redisContext>) -> StoreError {
        let error = failure(RedisConnection.describe(context))
        drop()
        return error
    }

    private static func describe(_ context: UnsafeMutablePointer<redisContext>) -> String {
        let message = withUnsafeBytes(of: context.pointee.errstr) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
        switch context.pointee.err {
        case REDIS_ERR_IO:
            let reason = errno == EAGAIN || errno == EWOULDBLOCK ? "timed out" : message
            return "I/O error: " + (reason.isEmpty ? String(cString: strerror(errno)) : reason)
        case REDIS_ERR_EOF: return "the server closed the connection"
        default: return message.isEmpty ? "error \(context.pointee.err)" : message
        }
    }

    /// `reply` as a `RedisReply` (hiredis's object is the caller's to free).
    static func copy(_ reply: UnsafeMutablePointer<redisReply>) -> RedisReply {
        let value = reply.pointee
        switch value.type {
        case REDIS_REPLY_STRING:
            guard let characters = value.str else { return .bytes([]) }
            return .bytes(Array(UnsafeRawBufferPointer(start: characters, count: Int(value.len))))
        case REDIS_REPLY_STATUS:
            return .status(value.str.map { String(cString: $0) } ?? "")
        case REDIS_REPLY_ERROR:
            return .error(value.str.map { String(cString: $0) } ?? "error")
        case REDIS_REPLY_INTEGER:
            return .integer(value.integer)
        case REDIS_REPLY_ARRAY:
            var elements: [RedisReply] = []
            elements.reserveCapacity(Int(value.elements))
            for index in 0..<Int(value.elements) {
                if let element = value.element[index] { elements.append(copy(element)) } else { elements.append(.null) }
            }
            return .array(elements)
        default:
            return .null
        }
    }
}
