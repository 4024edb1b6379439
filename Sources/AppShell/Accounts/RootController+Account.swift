/// Who is logged in, as the session's defaults keep it: `isLogin` (the flag the splash routes by)
/// and `username`.
extension RootController {
    /// The session's defaults key of the login flag.
    public static let isLoginKey = "isLogin"
    /// The session's defaults key of the logged-in user's name.
    public static let usernameKey = "username"

    /// The username of the account the session is logged in as; `nil` when it is not.
    public var username: String? {
        defaults.bool(forKey: Self.isLoginKey) ? defaults.string(forKey: Self.usernameKey) : nil
    }

    /// Logs the session in as `username`: stores who it is, and gives the session a new id (the
    /// one it had before the login names nothing any more: no fixation).
    public func logIn(as username: String) {
        defaults.set(true, forKey: Self.isLoginKey)
        defaults.set(username, forKey: Self.usernameKey)
        session?.user = username
        rotateSessionID()
    }

    /// Logs the session out: forgets who it was, and gives the session a new id. What else
    /// belonged to the user in the session's defaults, the app removes itself.
    public func logOut() {
        defaults.set(false, forKey: Self.isLoginKey)
        defaults.removeObject(forKey: Self.usernameKey)
        session?.user = nil
        rotateSessionID()
    }

    /// The logged-in user's store: the values every session of the user shares, on every
    /// instance, with the `UserDefaults` API — what `NSUbiquitousKeyValueStore` is to an iCloud
    /// account (the session's own values are `defaults`). `nil` when the session is not logged in.
    ///
    /// What an action sets here is committed with its other changes, all or nothing, and shown at
    /// once to the user's other open pages; two sessions of the user writing at the same moment
    /// lose nothing (the later one runs again on what the earlier one stored). It holds at most
    /// `maxUserStoreBytes` (the action that would pass it is refused with 413).
    public var userDefaults: DefaultsStore? {
        guard let session else { return nil }
        // A session logged in before sessions knew their user: it knows from now on.
        if session.user == nil, let username { session.user = username }
        return session.userDefaults
    }
}
