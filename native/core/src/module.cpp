// The Python module kutnahora_core: the native rules behind a small API of ints, which
// kutnahora.native turns into the engine's values (options, states).
#include <nanobind/nanobind.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "rules.hpp"

namespace nb = nanobind;
using namespace kh;

namespace {

struct Game {
    State state;

    std::vector<int> legal_keys() const {
        std::vector<int> keys;
        keys.reserve(state.options.size());
        for (const Option& o : state.options) keys.push_back(o.key());
        return keys;
    }

    void apply_index(int index) {
        if (!state.has_pending) throw nb::value_error("the game is over; no decision is accepted");
        if (index < 0 || index >= int(state.options.size())) throw nb::index_error("no legal option has this index");
        apply_option(state, state.options[index]);
    }

    void apply_key(int key) {
        for (const Option& o : state.options)
            if (o.key() == key) {
                apply_option(state, o);
                return;
            }
        throw nb::value_error("the option is not a legal answer to the pending decision");
    }

    std::vector<int> dump() const {
        std::vector<int> out;
        kh::dump(state, out);
        return out;
    }
};

// xorshift64*, the playouts' own generator (not the game's)
struct Choice {
    uint64_t x;
    explicit Choice(uint64_t seed) : x(seed * 0x9E3779B97F4A7C15ULL + 0x2545F4914F6CDD1DULL) {
        if (x == 0) x = 1;
    }
    uint32_t below(uint32_t n) {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        return uint32_t(((x * 0x2545F4914F6CDD1DULL) >> 32) % n);
    }
};

int playout(State& s, Choice& choice) {
    int decisions = 0;
    while (s.has_pending) {
        apply_option(s, s.options[choice.below(uint32_t(s.options.size()))]);
        ++decisions;
    }
    return decisions;
}

std::vector<uint32_t> seed_key(const std::vector<int64_t>& words) {
    std::vector<uint32_t> key;
    for (int64_t w : words) {
        if (w < 0 || w > 0xFFFFFFFFLL) throw nb::value_error("seed words are 32-bit");
        key.push_back(uint32_t(w));
    }
    if (key.empty()) key.push_back(0);
    return key;
}

}  // namespace

NB_MODULE(kutnahora_core, m) {
    m.doc() = "The rules of Kutna Hora in C++ (the Python engine, kutnahora.engine, is the reference).";

    nb::class_<Components>(m, "Components")
        .def("__init__", [](Components* self, const std::vector<int>& table) { new (self) Components(table); },
             nb::arg("table"))
        .def_ro("players", &Components::players);

    nb::class_<Game>(m, "Game")
        .def_static(
            "new",
            [](std::shared_ptr<Components> comp, const std::vector<int64_t>& words, int guild_card, int mine_card,
               bool events) {
                auto game = std::make_unique<Game>();
                new_game(game->state, comp, seed_key(words), guild_card, mine_card, events);
                return game.release();
            },
            nb::arg("components"), nb::arg("seed_words"), nb::arg("guild_setup_card"), nb::arg("mine_setup_card"),
            nb::arg("events"), nb::rv_policy::take_ownership)
        .def_static(
            "load",
            [](std::shared_ptr<Components> comp, const std::vector<int>& ints) {
                auto game = std::make_unique<Game>();
                kh::load(game->state, comp, ints);
                return game.release();
            },
            nb::arg("components"), nb::arg("ints"), nb::rv_policy::take_ownership)
        .def("clone", [](const Game& g) { return new Game(g); }, nb::rv_policy::take_ownership)
        .def("dump", &Game::dump)
        .def("legal_keys", &Game::legal_keys)
        .def("legal_count", [](const Game& g) { return int(g.state.options.size()); })
        .def("apply_index", &Game::apply_index, nb::arg("index"))
        .def("apply_key", &Game::apply_key, nb::arg("key"))
        .def("playout", [](Game& g, uint64_t seed) {
                Choice choice(seed);
                return playout(g.state, choice);
            }, nb::arg("seed"), "Play uniformly random options to the end; returns the decisions made.")
        .def_prop_ro("over", [](const Game& g) { return g.state.phase == OVER; })
        .def_prop_ro("pending_seat", [](const Game& g) { return g.state.has_pending ? g.state.pending_seat : -1; })
        .def_prop_ro("pending_kind", [](const Game& g) { return g.state.has_pending ? g.state.pending_kind : -1; })
        .def_prop_ro("version", [](const Game& g) { return g.state.version; })
        .def("points", [](const Game& g) {
            std::vector<int> out;
            for (const Player& p : g.state.players) out.push_back(p.points);
            return out;
        })
        .def("final_scores", [](const Game& g) {
            std::vector<std::vector<int>> out;
            for (const auto& parts : g.state.final_scores) out.emplace_back(parts.begin(), parts.end());
            return out;
        }, "Every seat's final breakdown (in the engine's order, the total last), once the game is over.")
        .def("groschen", [](const Game& g) {
            std::vector<int> out;
            for (const Player& p : g.state.players) out.push_back(p.groschen);
            return out;
        });

    m.def(
        "random_games",
        [](std::shared_ptr<Components> comp, int64_t first_seed, int games, uint64_t choice_seed, bool events) {
            Choice choice(choice_seed);
            int64_t decisions = 0;
            int64_t checksum = 0;
            State s;
            {
                nb::gil_scoped_release release;
                for (int k = 0; k < games; ++k) {
                    int64_t seed = first_seed + k;
                    std::vector<int64_t> words{seed & 0xFFFFFFFFLL};
                    if (seed >> 32) words.push_back(seed >> 32);
                    new_game(s, comp, seed_key(words), -1, -1, events);
                    decisions += playout(s, choice);
                    for (const Player& p : s.players) checksum += p.points;
                }
            }
            return std::make_tuple(decisions, checksum);
        },
        nb::arg("components"), nb::arg("first_seed"), nb::arg("games"), nb::arg("choice_seed"), nb::arg("events"),
        "Play ``games`` games from consecutive seeds with uniformly random options, all in C++: "
        "(decisions made, sum of final points).");
}
