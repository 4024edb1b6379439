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
        rotateSessionID()
    }

    /// Logs the session out: forgets who it was, and gives the session a new id. What else
    /// belonged to the user in the session's defaults, the app removes itself.
    public func logOut() {
        defaults.set(false, forKey: Self.isLoginKey)
        defaults.removeObject(forKey: Self.usernameKey)
        rotateSessionID()
    }
}
