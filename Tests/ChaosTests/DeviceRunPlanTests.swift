import Testing

/// Scenario 20's seeded choices, without servers: the fleet and the operations a seed makes, and when a device
/// counts as eligible.
@Suite struct DeviceRunPlanTests {
    static func plan(seed: UInt64, streams: Int = 20) -> (fleet: DeviceFleet, operations: [DeviceOperation]) {
        let random = ScenarioRandom(seed: seed)
        let fleet = DeviceFleet(random: random, prefix: "c20.", streams: streams)
        let tLead = Dictionary(uniqueKeysWithValues: fleet.streams.map { ($0, 1000.0 + 10) })
        return (fleet, DeviceOperation.plan(fleet: fleet, random: random, t0: 1000, window: 20, tLead: tLead))
    }

    @Test func aSeedRepeatsTheFleetAndTheOperations() {
        let first = Self.plan(seed: 42)
        let again = Self.plan(seed: 42)
        #expect(first.fleet.deviceOrder == again.fleet.deviceOrder)
        #expect(first.fleet.streams.map { first.fleet.participants[$0]!.map(\.user) } == again.fleet.streams.map { again.fleet.participants[$0]!.map(\.user) })
        #expect(first.operations.map(\.what) == again.operations.map(\.what) && first.operations.map(\.at) == again.operations.map(\.at))
        let other = Self.plan(seed: 43)
        #expect(first.operations.map(\.at) != other.operations.map(\.at), "another seed, other choices")
    }

    @Test(arguments: [1, 7, 99, 123_456] as [UInt64]) func everyKindOfOperationAtLeastOnceInTimeOrder(seed: UInt64) {
        let (fleet, operations) = Self.plan(seed: seed)
        let kinds = Set(operations.map(\.what))
        for kind in ["reschedule later", "reschedule earlier", "reschedule past 15 minutes", "reschedule back inside 15 minutes",
                     "reschedule by 9 hours", "reschedule back from 9 hours", "cancel", "ready", "started", "late guest"] {
            #expect(kinds.contains(kind), "seed \(seed): \(kind)")
        }
        #expect(operations.map(\.at) == operations.map(\.at).sorted())
        // A reschedule by 9 hours comes after its stream's activities started (T-lead + 6-9 s).
        #expect(operations.filter { $0.what == "reschedule by 9 hours" }.allSatisfy { $0.at >= 1016 })
        #expect(fleet.streams.count == 20 && fleet.spare.count == 6)
        #expect(fleet.streams.allSatisfy { (1...3).contains(fleet.participants[$0]!.count) })
    }

    @Test func eligibleSinceFollowsTokensGuestsAndThePreference() {
        let (fleet, _) = Self.plan(seed: 5)
        let stream = fleet.streams[0]
        let creator = fleet.participants[stream]![0].user
        for id in fleet.deviceOrder where fleet.devices[id]!.user == creator {
            let device = fleet.devices[id]!
            let needs = device.fcm != nil && (device.platform == "android" || (device.platform == "ios" && device.pushToStart != nil))
            #expect((fleet.eligibleSince(id, stream) != nil) == (needs && fleet.isEligible(id)))
        }
        // A device gaining its missing token becomes eligible from that moment.
        fleet.devices["late-d0"] = DeviceFleet.Device(user: creator, platform: "android", fcm: nil, pushToStart: nil)
        fleet.tokenSince["late-d0"] = 0
        #expect(fleet.eligibleSince("late-d0", stream) == nil)
        fleet.devices["late-d0"]?.fcm = "fcm-late"
        fleet.tokenSince["late-d0"] = 1005
        let preferenceOn = fleet.users.first { $0.id == creator }!.on
        #expect(fleet.eligibleSince("late-d0", stream) == (preferenceOn ? 1005 : nil))
        #expect(fleet.eligibleSince("late-d0", fleet.streams[1]) == nil || fleet.participants[fleet.streams[1]]!.contains { $0.user == creator })
    }

    @Test func onAPNsAnIPhoneNeedsNoFCMTokenAndReportsItsVersion() {
        let (fleet, operations) = Self.plan(seed: 11, streams: 60)
        let before = fleet.deviceOrder.map { fleet.isEligible($0) }
        fleet.iosNeedsFCM = false
        fleet.reportOSVersions(newer: 0.6)
        let iphones = fleet.deviceOrder.filter { fleet.devices[$0]!.platform == "ios" }
        #expect(Set(fleet.osVersion.keys) == Set(iphones), "every iPhone and nothing else reports a version")
        let newer = iphones.filter { fleet.onIOS18($0) }.count
        #expect(newer > 0 && newer < iphones.count, "a mix: \(newer) of \(iphones.count)")
        for (index, id) in fleet.deviceOrder.enumerated() {
            let device = fleet.devices[id]!
            if device.platform == "ios" && device.fcm == nil && device.pushToStart != nil && fleet.users.first(where: { $0.id == device.user })!.on {
                #expect(!before[index] && fleet.isEligible(id), "\(id): eligible without an FCM token")
            } else {
                #expect(before[index] == fleet.isEligible(id), "\(id): unchanged")
            }
        }
        // The same seed makes the same fleet and operations: the versions are drawn after them.
        let again = Self.plan(seed: 11, streams: 60)
        #expect(again.fleet.deviceOrder == fleet.deviceOrder && again.operations.map(\.at) == operations.map(\.at))
        again.fleet.reportOSVersions(newer: 0.6)
        #expect(again.fleet.osVersion == fleet.osVersion)
        #expect(!fleet.onIOS18("no-such-device"))
    }
}
