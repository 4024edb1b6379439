import CHiredis

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What a subscriber needs beyond a command and its reply: commands sent without waiting for
/// their replies (which come among its messages; a cluster's pipelines over several nodes send
/// this way too), the socket for a `poll` over several connections, the replies one read brought,
/// and a way to end a wait from another thread.
extension RedisConnection {
    /// Ends a `receive` another thread is waiting in (it throws): the socket is shut down.
    func interrupt() {
        socket.withLock { descriptor in
            if descriptor >= 0 { shutdown(descriptor, Int32(SHUT_RDWR)) }
        }
    }

    /// The socket (-1: not connected), for a `poll` over several connections (a subscriber's).
    var descriptor: Int32 { socket.withLock { $0 } }

    /// Sends `commands` without waiting for their replies (a subscriber's `SSUBSCRIBE`s, whose
    /// replies come among its messages); connects first when not connected.
    func sendWithoutWaiting(_ commands: [[[UInt8]]]) throws(StoreError) {
        if context == nil { try connect() }
        guard let context else { throw failure("not connected") }
        for arguments in commands { try append(arguments, to: context) }
        var done: Int32 = 0
        while done == 0 {
            guard redisBufferWrite(context, &done) == REDIS_OK else { throw failed(context) }
        }
    }

    /// Reads what the socket holds — one read, which blocks when it holds nothing: call it once
    /// `poll` found the socket readable — and returns the replies complete so far (maybe none).
    func receiveAvailable() throws(StoreError) -> [RedisReply] {
        guard let context else { throw failure("not connected") }
        guard redisBufferRead(context) == REDIS_OK else { throw failed(context) }
        var replies: [RedisReply] = []
        while true {
            var raw: UnsafeMutableRawPointer?
            guard redisGetReplyFromReader(context, &raw) == REDIS_OK else { throw failed(context) }
            guard let raw else { return replies }
            replies.append(RedisConnection.copy(raw.assumingMemoryBound(to: redisReply.self)))
            freeReplyObject(raw)
        }
    }
}
