// The replication protocol of one process, driven through a scripted world:
// the test plays the other processes' messages and deaths in the orders it
// chooses, and checks what the protocol sends and what its program gets.
// Replica k of rank i is process k * n + i (layout.hpp).

#include "scripted_world.hpp"

#include "communicators.hpp"
#include "hashing.hpp"
#include "protocol.hpp"
#include "set_collectives.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <numeric>

namespace rd = rampart::replica::detail;
using rampart::replica::test::scripted_world;

namespace {

constexpr int app_tag = 5;
constexpr int large = 128 * 1024;  // not copied by the protocol: its request waits for the acknowledgements

// MPI_COMM_WORLD as the program sees it: id 0, so point-to-point is context 0.
rd::communicator world_of(int ranks, int me) {
    rd::communicator c;
    c.ranks.resize(static_cast<std::size_t>(ranks));
    std::iota(c.ranks.begin(), c.ranks.end(), 0);
    c.my_rank = me;
    return c;
}

std::vector<char> bytes_of(const std::vector<int>& v) {
    std::vector<char> b(v.size() * sizeof(int));
    std::memcpy(b.data(), v.data(), b.size());
    return b;
}

std::uint64_t hash_of(const std::vector<char>& b) { return rd::hash_bytes(b.data(), b.size()); }

// Rank 0's replica 0 of 2 ranks x 2 replicas: process 0; rank 1 is processes
// 1 (replica 0, which sends to it) and 3; its sibling is process 2.
struct two_by_two : ::testing::Test {
    scripted_world net;
    rd::protocol p{net, rd::layout(4, 2, 0), 0};
    rd::communicator world = world_of(2, 0);

    std::shared_ptr<rd::recv_request> receive(std::vector<int>& into) {
        return p.irecv(into.data(), static_cast<int>(into.size()), MPI_INT, 1, app_tag, &world, world.p2p());
    }
    void settle() { p.progress_pending(); }

    // An MPI_Issend of `value` to rank 1, its one copy sent to process 1 and
    // the other replica's acknowledged by process 3.
    std::shared_ptr<rd::send_request> confirmed_synchronous_send(std::uint64_t& value) {
        auto s = p.isend(&value, 1, MPI_UINT64_T, 1, app_tag, &world, world.p2p(), true);
        settle();
        const auto copies = net.sent_to(1, rd::data_tag(0, app_tag) | rd::synchronous_bit);
        EXPECT_EQ(copies.size(), 1u);
        net.control(3, rd::ack_tag, 0, hash_of(copies.empty() ? std::vector<char>{} : copies[0].bytes));
        return s;
    }
};

TEST_F(two_by_two, a_message_is_taken_and_acknowledged_to_the_senders_other_replica) {
    std::vector<int> got(4, 0);
    auto r = receive(got);
    const auto sent = bytes_of({1, 2, 3, 4});
    net.arrives(1, rd::data_tag(world.p2p(), app_tag), sent);
    settle();
    ASSERT_TRUE(r->complete);
    EXPECT_EQ(got, (std::vector<int>{1, 2, 3, 4}));
    EXPECT_EQ(r->status.MPI_SOURCE, 1);
    EXPECT_EQ(r->status.MPI_TAG, app_tag);
    const auto acks = net.sent_to(3, rd::ack_tag);
    ASSERT_EQ(acks.size(), 1u);
    EXPECT_EQ(acks[0].word(0), 0u);             // message 0 of rank 1's stream
    EXPECT_EQ(acks[0].word(1), hash_of(sent));  // what arrived, for the sender to compare
    EXPECT_TRUE(net.sent_to(1, rd::ack_tag).empty());
}

TEST_F(two_by_two, a_message_sent_again_by_the_next_replica_after_a_death_is_taken_once) {
    std::vector<int> first(1), second(1);
    auto r1 = receive(first);
    net.arrives(1, rd::data_tag(0, app_tag), bytes_of({10}));
    settle();
    ASSERT_TRUE(r1->complete);
    // Process 1 dies; process 3 sends for it from message 0 on (its copy of
    // message 0 was not confirmed to it yet), then message 1.
    net.dies(1);
    net.control(3, rd::start_tag, 0);
    net.arrives(3, rd::data_tag(0, app_tag), bytes_of({10}));
    net.arrives(3, rd::data_tag(0, app_tag), bytes_of({11}));
    auto r2 = receive(second);
    settle();
    ASSERT_TRUE(r2->complete);
    EXPECT_EQ(second[0], 11);
    EXPECT_EQ(p.duplicates_dropped, 1u);
    EXPECT_EQ(p.replicas_lost, 1u);
    EXPECT_EQ(r2->status.MPI_SOURCE, 1);  // the rank, whichever replica sent it
}

TEST_F(two_by_two, a_message_cut_off_by_its_senders_death_comes_whole_from_the_next_replica) {
    std::vector<int> got(3, 0);
    auto r = receive(got);
    net.arrives(1, rd::data_tag(0, app_tag), bytes_of({7, 7, 7}), /*whole=*/false);
    settle();
    EXPECT_FALSE(r->complete);
    // What process 3 sent for rank 1 before this process knew of the death
    // is kept in order until it does.
    net.control(3, rd::start_tag, 0);
    net.arrives(3, rd::data_tag(0, app_tag), bytes_of({7, 7, 7}));
    settle();
    EXPECT_FALSE(r->complete);
    net.dies(1);
    settle();
    ASSERT_TRUE(r->complete);
    EXPECT_EQ(got, (std::vector<int>{7, 7, 7}));
    EXPECT_EQ(p.duplicates_dropped, 0u);
}

TEST_F(two_by_two, a_send_completes_once_every_live_replica_of_the_destination_has_it) {
    std::vector<char> data(large, 'x');
    auto s = p.isend(data.data(), large, MPI_BYTE, 1, app_tag, &world, world.p2p(), false);
    settle();
    const auto copies = net.sent_to(1, rd::data_tag(0, app_tag));  // replica 0 to replica 0: no start control
    ASSERT_EQ(copies.size(), 1u);
    EXPECT_TRUE(net.sent_to(1, rd::start_tag).empty());
    EXPECT_FALSE(s->done());  // process 3 has its copy (from process 2) only once it says so
    net.control(3, rd::ack_tag, 0, hash_of(data));
    settle();
    EXPECT_TRUE(s->done());
    EXPECT_EQ(s->final_status().MPI_ERROR, MPI_SUCCESS);
}

TEST_F(two_by_two, the_replica_elected_for_a_dead_sibling_sends_its_unconfirmed_copies) {
    std::vector<char> data(large, 'y');
    auto s = p.isend(data.data(), large, MPI_BYTE, 1, app_tag, &world, world.p2p(), false);
    settle();
    EXPECT_FALSE(s->done());
    net.dies(2);  // rank 0's replica 1, which sends to process 3
    settle();
    const auto starts = net.sent_to(3, rd::start_tag);
    ASSERT_EQ(starts.size(), 1u);
    EXPECT_EQ(starts[0].word(0), 0u);  // from message 0 on
    const auto copies = net.sent_to(3, rd::data_tag(0, app_tag));
    ASSERT_EQ(copies.size(), 1u);
    EXPECT_EQ(copies[0].bytes, data);
    net.control(3, rd::ack_tag, 0, hash_of(data));
    settle();
    EXPECT_TRUE(s->done());
}

TEST_F(two_by_two, a_copy_that_differs_between_the_replicas_stops_the_job_as_corruption) {
    std::vector<char> data(large, 'z');
    auto s = p.isend(data.data(), large, MPI_BYTE, 1, app_tag, &world, world.p2p(), false);
    settle();
    net.control(3, rd::ack_tag, 0, hash_of(data) ^ 1);  // process 3 got other bytes from process 2
    EXPECT_EXIT(settle(), ::testing::ExitedWithCode(4), "silent data corruption detected: message 0 from rank 0");
}

TEST_F(two_by_two, losing_every_replica_of_a_rank_ends_the_job_naming_it) {
    net.dies(1);
    net.dies(3);
    EXPECT_EXIT(settle(), ::testing::ExitedWithCode(5), "rank 1 lost every replica \\(processes 1, 3\\)");
}

TEST_F(two_by_two, a_synchronous_send_completes_once_the_receivers_program_took_it) {
    std::uint64_t value = 99;
    auto s = confirmed_synchronous_send(value);
    net.control(3, rd::matched_tag, 0);  // the other replica's program took its copy
    settle();
    EXPECT_FALSE(s->done());  // replica 0 waits for replica 0 of the receiver
    net.dies(1);              // whose place process 3 takes: its report counts
    settle();
    EXPECT_TRUE(s->done());
}

TEST_F(two_by_two, a_synchronous_send_completes_when_its_receivers_same_replica_took_it) {
    std::uint64_t value = 98;
    auto s = confirmed_synchronous_send(value);
    settle();
    EXPECT_FALSE(s->done());  // every copy confirmed, but not taken by the program of process 1
    net.control(1, rd::matched_tag, 0);
    settle();
    EXPECT_TRUE(s->done());
}

TEST_F(two_by_two, a_program_that_takes_a_synchronous_message_tells_every_replica_of_the_sender) {
    std::vector<int> got(1, 0);
    net.arrives(1, rd::data_tag(0, app_tag) | rd::synchronous_bit, bytes_of({3}));
    settle();
    EXPECT_TRUE(net.sent_to(1, rd::matched_tag).empty());  // not taken by the program yet
    auto r = receive(got);
    settle();
    ASSERT_TRUE(r->complete);
    for (int q : {1, 3}) {
        const auto told = net.sent_to(q, rd::matched_tag);
        ASSERT_EQ(told.size(), 1u) << "process " << q;
        EXPECT_EQ(told[0].word(0), 0u);
    }
}

// A communicator of both ranks other than the world: its collectives are
// the library's (point-to-point messages), whichever the number of replicas.
TEST_F(two_by_two, a_copy_sent_for_a_dead_sibling_waits_until_its_receiver_entered_the_librarys_collectives_before) {
    rd::communicator both = world_of(2, 0);
    both.id = 3;
    char before = 'b', after = 'a';
    auto s0 = p.isend(&before, 1, MPI_BYTE, 1, app_tag, &world, world.p2p(), false);
    p.collective_entered(both);
    p.collective_passed(both);
    net.dies(2);  // rank 0's replica 1: this process sends to process 3 in its place
    settle();
    auto s1 = p.isend(&after, 1, MPI_BYTE, 1, app_tag, &world, world.p2p(), false);
    settle();
    EXPECT_EQ(net.sent_to(1, rd::data_tag(0, app_tag)).size(), 2u);
    // Sent before the collective: it goes at once. Sent after it: process 3
    // may still be before the collective, where a receive from any source
    // could take it.
    auto copies = net.sent_to(3, rd::data_tag(0, app_tag));
    ASSERT_EQ(copies.size(), 1u);
    EXPECT_EQ(copies[0].bytes, std::vector<char>{'b'});
    net.control(3, rd::entered_with_tag, 1);
    settle();
    copies = net.sent_to(3, rd::data_tag(0, app_tag));
    ASSERT_EQ(copies.size(), 2u);
    EXPECT_EQ(copies[1].bytes, std::vector<char>{'a'});
}

TEST_F(two_by_two, a_member_of_a_broken_set_tells_the_sender_in_its_dead_members_place_how_far_it_is) {
    rd::communicator both = world_of(2, 0);
    both.id = 3;
    p.collective_entered(both);
    p.collective_passed(both);
    settle();
    EXPECT_TRUE(net.sent_to(3, rd::entered_with_tag).empty());  // no death: nobody to tell
    net.dies(1);  // rank 1's replica 0: process 3 sends to this process in its place
    settle();
    p.collective_entered(both);
    settle();
    const auto told = net.sent_to(3, rd::entered_with_tag);
    ASSERT_EQ(told.size(), 2u);
    EXPECT_EQ(told[0].word(0), 1u);  // at the death
    EXPECT_EQ(told[1].word(0), 2u);  // entering the next collective
    // The world of one rank alone is not shared with rank 1: nothing to tell.
    rd::communicator alone = world_of(1, 0);
    alone.id = 4;
    p.collective_entered(alone);
    settle();
    EXPECT_EQ(net.sent_to(3, rd::entered_with_tag).size(), 2u);
}

// Rank 0's replica 0 of 3 ranks x 2 replicas: process 0; its set is
// processes 0, 1 and 2, the other set 3, 4 and 5.
TEST(three_by_two, in_a_broken_set_a_collective_is_left_once_the_live_members_of_the_set_entered_it) {
    scripted_world net;
    rd::protocol p{net, rd::layout(6, 2, 0), 0};
    rd::communicator world = world_of(3, 0);
    net.dies(2);  // rank 2's replica 0: process 5 sends to this set in its place
    p.progress_pending();
    p.collective_entered(world);
    p.progress_pending();
    for (int q : {1, 5}) {  // the live member of this set, and the substitute
        const auto told = net.sent_to(q, rd::entered_with_tag);
        ASSERT_EQ(told.size(), 1u) << "process " << q;
        EXPECT_EQ(told[0].word(0), 1u);
    }
    // The collective's data may have come from the other set before
    // process 1 entered it: the program may go on only once it has.
    net.control(1, rd::entered_with_tag, 1);
    p.collective_passed(world);
    EXPECT_TRUE(net.sent_to(4, rd::entered_with_tag).empty());  // the other set is whole
}

// The same, with collectives on MPI_COMM_WORLD gathered by MPI inside each
// replica set: set 0 is processes 0 and 1, set 1 processes 2 and 3.
struct two_by_two_in_sets : two_by_two {
    rd::set_collectives& sets = rd::set_collectives::get();
    two_by_two_in_sets() {
        sets = rd::set_collectives{};
        sets.start();
    }
    ~two_by_two_in_sets() override { sets = rd::set_collectives{}; }

    template <class T>
    static std::vector<char> words(std::initializer_list<T> v) {
        std::vector<char> b(v.size() * sizeof(T));
        std::memcpy(b.data(), std::data(v), b.size());
        return b;
    }
};

TEST_F(two_by_two_in_sets, a_copy_sent_for_a_dead_sibling_waits_until_its_receiver_entered_the_collectives_before) {
    net.set_gathers({{1, words<std::uint64_t>({0})}});  // rank 1's empty block, then the collective's index
    ASSERT_TRUE(sets.barrier());
    EXPECT_EQ(sets.passed(), 1u);
    net.dies(2);  // rank 0's replica 1: this process sends to process 3 in its place
    settle();
    char one = 'a';
    auto s = p.isend(&one, 1, MPI_BYTE, 1, app_tag, &world, world.p2p(), false);
    settle();
    EXPECT_EQ(net.sent_to(1, rd::data_tag(0, app_tag)).size(), 1u);
    // Process 3 may still be inside the barrier: a receive from any source
    // there could take a message sent after it.
    EXPECT_TRUE(net.sent_to(3, rd::data_tag(0, app_tag)).empty());
    net.control(3, rd::entered_tag, 1);
    settle();
    const auto copies = net.sent_to(3, rd::data_tag(0, app_tag));
    ASSERT_EQ(copies.size(), 1u);
    EXPECT_EQ(copies[0].bytes, std::vector<char>{'a'});
    const auto starts = net.sent_to(3, rd::start_tag);
    ASSERT_EQ(starts.size(), 1u);
    EXPECT_EQ(starts[0].word(0), 0u);
}

TEST_F(two_by_two_in_sets, a_failed_gathering_takes_the_blocks_from_the_ranks_other_replicas) {
    // No gathering in the set (a member died meanwhile, unknown yet): rank
    // 1's block comes from its replica in the other set, and the collective
    // ends once this set's other member has entered it too.
    net.arrives(3, rd::block_tag, [] {
        auto b = words<std::uint64_t>({0, 1, 1});  // collective 0, rank 1, kept
        const auto v = words<int>({5});
        b.insert(b.end(), v.begin(), v.end());
        return b;
    }());
    net.control(1, rd::entered_tag, 1);
    int mine = 3, sum = 0;
    ASSERT_TRUE(sets.allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM));
    EXPECT_EQ(sum, 8);
    EXPECT_TRUE(net.set_revoked());
    EXPECT_EQ(sets.gathered_by_pulling, 1u);
    for (int q : {1, 3}) {
        const auto asked = net.sent_to(q, rd::block_request_tag);
        ASSERT_EQ(asked.size(), 1u) << "process " << q;
        EXPECT_EQ(asked[0].word(0), 0u);
        EXPECT_EQ(asked[0].word(1), 1u);
    }
    const auto told = net.sent_to(1, rd::entered_tag);
    ASSERT_FALSE(told.empty());
    EXPECT_EQ(told[0].word(0), 1u);
}

// 2 ranks x 2 replicas and a spare (process 4): rank 0's replica 1
// (process 2) died, and the spare re-creates it from this process's state.
TEST(with_a_spare, the_survivor_sends_its_state_to_the_spare_at_the_decided_sync) {
    scripted_world net;
    rd::protocol p(net, rd::layout(5, 2, 1), 0);
    std::uint32_t state = 0x5eed1234;
    p.protect(&state, sizeof state);
    net.dies(2);
    net.control(4, rd::query_tag, 0);
    net.control(4, rd::decide_tag, 0, 1, 1);  // rank 0's replica 1, at the first sync
    p.progress_pending();
    const auto answers = net.sent_to(4, rd::synced_tag);
    ASSERT_EQ(answers.size(), 1u);
    EXPECT_EQ(answers[0].word(0), 0u);  // syncs passed
    EXPECT_EQ(answers[0].word(1), static_cast<std::uint64_t>(rd::sync_answer::ready));
    net.control(4, rd::go_tag, 0, 1, 0);  // this process (0) is the survivor that sends the state
    p.sync();
    EXPECT_EQ(p.syncs(), 1);
    EXPECT_EQ(net.sent_to(4, rd::arrived_tag).size(), 1u);
    EXPECT_EQ(net.sent_to(4, rd::joined_tag).size(), 1u);
    EXPECT_EQ(p.where().process(0, 1), 4);  // the spare is rank 0's replica 1 now
    const auto sent = net.sent_to(4, rd::state_tag);
    ASSERT_EQ(sent.size(), 1u);
    const auto& bytes = sent[0].bytes;
    const char* mark = reinterpret_cast<const char*>(&state);
    EXPECT_NE(std::search(bytes.begin(), bytes.end(), mark, mark + sizeof state), bytes.end());
    EXPECT_EQ(p.states_sent, 1u);
}

// Rank 0's replica 0 of 2 ranks x 3 replicas: process 0; its siblings are
// processes 2 and 4; rank 1 is processes 1 (which sends to it), 3 and 5.
struct two_by_three : ::testing::Test {
    scripted_world net;
    rd::protocol p{net, rd::layout(6, 3, 0), 0};
    rd::communicator world = world_of(2, 0);
};

TEST_F(two_by_three, a_message_reaches_the_program_once_a_majority_of_the_replicas_received_it_alike) {
    std::vector<int> got(2, 0);
    auto r = p.irecv(got.data(), 2, MPI_INT, 1, app_tag, &world, world.p2p());
    const auto sent = bytes_of({4, 2});
    net.arrives(1, rd::data_tag(0, app_tag), sent);
    p.progress_pending();
    for (int sibling : {2, 4}) {
        const auto votes = net.sent_to(sibling, rd::vote_tag);
        ASSERT_EQ(votes.size(), 1u);
        EXPECT_EQ(votes[0].word(0), 1u);  // source rank
        EXPECT_EQ(votes[0].word(1), 0u);  // message number
        EXPECT_EQ(votes[0].word(2), hash_of(sent));
    }
    EXPECT_FALSE(r->complete);  // one of three
    net.control(4, rd::vote_tag, 1, 0, hash_of(sent));
    p.progress_pending();
    ASSERT_TRUE(r->complete);
    EXPECT_EQ(got, (std::vector<int>{4, 2}));
}

TEST_F(two_by_three, a_replica_outvoted_on_what_it_received_dies_before_its_program_sees_it) {
    std::vector<int> got(1, 0);
    auto r = p.irecv(got.data(), 1, MPI_INT, 1, app_tag, &world, world.p2p());
    net.arrives(1, rd::data_tag(0, app_tag), bytes_of({13}));  // corrupted on its way here
    net.control(2, rd::vote_tag, 1, 0, hash_of(bytes_of({12})));
    net.control(4, rd::vote_tag, 1, 0, hash_of(bytes_of({12})));
    // Its program never sees the copy: the receive is still open when it dies.
    EXPECT_EXIT(
        {
            p.progress_pending();
            if (r->complete) std::_Exit(1);
        },
        ::testing::KilledBySignal(SIGKILL), "");
}

TEST_F(two_by_three, an_outvoted_copy_kills_the_replica_that_sent_it) {
    // Rank 0's replicas 1 and 2 (processes 2 and 4) send to processes 3 and 5.
    std::vector<char> data(large, 'v');
    auto s = p.isend(data.data(), large, MPI_BYTE, 1, app_tag, &world, world.p2p(), false);
    net.control(3, rd::ack_tag, 0, hash_of(data));
    net.control(5, rd::ack_tag, 0, hash_of(data) ^ 1);  // replica 2's copy differs: outvoted 2 to 1
    p.progress_pending();
    EXPECT_TRUE(s->done());
    EXPECT_EQ(p.corruptions_detected, 1u);
    EXPECT_EQ(net.sent_to(4, rd::die_tag).size(), 1u);
    EXPECT_TRUE(net.sent_to(2, rd::die_tag).empty());
}

}  // namespace

// Datatypes and statuses are MPI's own; no message goes through MPI. Set
// up for the tests only, not when they are listed.
struct mpi_environment : ::testing::Environment {
    void SetUp() override { PMPI_Init(nullptr, nullptr); }
    void TearDown() override { PMPI_Finalize(); }
};

int main(int argc, char** argv) {
    ::testing::InitGoogleTest(&argc, argv);
    // A death test runs the binary again for its statement: MPI's threads
    // do not survive a fork.
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    ::testing::AddGlobalTestEnvironment(new mpi_environment);
    return RUN_ALL_TESTS();
}
