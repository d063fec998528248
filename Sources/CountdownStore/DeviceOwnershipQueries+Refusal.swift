import Postgres

extension DeviceOwnershipQueries {
    /// Why a user may not act on a device.
    public enum Refusal: Sendable, Equatable {
        /// The user is not in `users`.
        case unknownUser
        /// The device is linked to someone else, or does not exist (the two are answered alike, so nobody learns
        /// which device ids are in use).
        case notYours
    }

    /// Why `userID` may not use the device, or nil when it is theirs. With `lock` the device's row is share-locked
    /// until the transaction ends, so it cannot change hands before the caller's write commits.
    public static func refusal(of deviceID: String, userID: String, lock: Bool, on connection: PostgresConnection) throws -> Refusal? {
        let sql = "SELECT user_id FROM devices WHERE device_id = $1" + (lock ? " FOR SHARE OF devices" : "")
        let owner = try connection.query(sql, [deviceID]).first.map { try $0.decode("user_id", as: String?.self) }
        if owner == userID { return nil }
        guard try connection.query("SELECT 1 FROM users WHERE id = $1", [userID]).first != nil else { return .unknownUser }
        return .notYours
    }
}
