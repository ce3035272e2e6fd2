// The Python module kutnahora_core: the native rules behind a small API of ints, which
// kutnahora.native turns into the engine's values (options, states).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cmath>
#include <utility>

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

// The search bot's rollout policies (kutnahora.clients.bots.mcts), choosing with Python's generator exactly
// as the Python policies do, so that a search makes the same decisions with either engine.
enum RolloutPolicy { HEURISTIC_ROLLOUT = 0, RANDOM_ROLLOUT = 1 };

const Option& rollout_choice(const State& s, int policy, PyRandom& rng) {
    const auto& options = s.options;
    int n = int(options.size());
    if (policy == HEURISTIC_ROLLOUT) {
        if (s.pending_kind == D_PLAY_CARD) {
            int useful = 0;
            for (const Option& o : options) useful += o.type == O_PLAY && o.b >= 0;
            if (useful) {
                int pick = rng.randbelow(useful);
                for (const Option& o : options)
                    if (o.type == O_PLAY && o.b >= 0 && pick-- == 0) return o;
            }
            return options[rng.randbelow(n)];
        }
        if (s.pending_kind == D_TAX || s.pending_kind == D_REFILL_MINERS) return options[0];
        if (n > 1 && options[n - 1].type == O_SKIP) return options[rng.randbelow(n - 1)];
    }
    return options[rng.randbelow(n)];
}

void load_rng(PyRandom& rng, const std::vector<int64_t>& words) {
    if (words.size() != 625) throw nb::value_error("a generator's state is 624 words and an index");
    for (int i = 0; i < 624; ++i) rng.mt[i] = uint32_t(words[i]);
    if (words[624] < 0 || words[624] > 624) throw nb::value_error("a generator's index is 0..624");
    rng.index = int(words[624]);
}

int playout(State& s, Choice& choice) {
    int decisions = 0;
    while (s.has_pending) {
        apply_option(s, s.options[choice.below(uint32_t(s.options.size()))]);
        ++decisions;
    }
    return decisions;
}

// The action ids of the learning environments (kutnahora.learned.actions): every id's option key, so that
// the options listed can be answered as ids without a Python call per option.
struct ActionIds {
    std::vector<std::pair<int32_t, int>> by_key;  // sorted by key
    explicit ActionIds(const std::vector<int32_t>& keys) {
        for (size_t id = 0; id < keys.size(); ++id) by_key.emplace_back(keys[id], int(id));
        std::sort(by_key.begin(), by_key.end());
        for (size_t k = 1; k < by_key.size(); ++k)
            if (by_key[k].first == by_key[k - 1].first) throw nb::value_error("two action ids name one option");
    }
    int id(int32_t key) const {
        auto it = std::lower_bound(by_key.begin(), by_key.end(), std::make_pair(key, -1));
        if (it == by_key.end() || it->first != key) throw nb::value_error("an option listed has no action id");
        return it->second;
    }
};

using Vector = nb::ndarray<float, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

void check_viewer(const Game& g, const Encoding& e, int viewer) {
    if (viewer < -1 || viewer >= int(g.state.players.size())) throw nb::value_error("no such seat");
    if (g.state.comp->players != int(g.state.players.size()) || e.size <= 0)
        throw nb::value_error("the encoding does not fit this game");
}

// A Python list of the vector's entries, as OpenSpiel's tensors are: 0.0 and 1.0 shared, the rest made.
nb::list vector_list(const std::vector<float>& values) {
    PyObject* list = PyList_New(Py_ssize_t(values.size()));
    if (!list) throw nb::python_error();
    nb::object zero = nb::steal(PyFloat_FromDouble(0.0)), one = nb::steal(PyFloat_FromDouble(1.0));
    for (size_t i = 0; i < values.size(); ++i) {
        const float v = values[i];
        PyObject* item;
        if (v == 0.0f && !std::signbit(v)) {
            item = zero.ptr();
            Py_INCREF(item);
        } else if (v == 1.0f) {
            item = one.ptr();
            Py_INCREF(item);
        } else {
            item = PyFloat_FromDouble(double(v));
            if (!item) {
                Py_DECREF(list);
                throw nb::python_error();
            }
        }
        PyList_SET_ITEM(list, Py_ssize_t(i), item);
    }
    return nb::steal<nb::list>(list);
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

    nb::class_<Encoding>(m, "Encoding")
        .def(nb::init<const std::vector<int>&, const std::vector<float>&, const std::vector<float>&>(),
             nb::arg("table"), nb::arg("scale"), nb::arg("low"),
             "The observation vector's layout as offsets (kutnahora.envs.native_play), and the normalised "
             "form's scale and lowest value of every entry.")
        .def_ro("size", &Encoding::size);

    nb::class_<ActionIds>(m, "ActionIds")
        .def(nb::init<const std::vector<int32_t>&>(), nb::arg("keys"),
             "The option key of every action id, in the order of the ids.");

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
        .def(
            "rollout",
            [](Game& g, int policy, const std::vector<int64_t>& rng_state) {
                if (policy != HEURISTIC_ROLLOUT && policy != RANDOM_ROLLOUT) throw nb::value_error("no such policy");
                PyRandom rng;
                load_rng(rng, rng_state);
                while (g.state.has_pending) {
                    if (g.state.options.empty()) throw nb::value_error("a pending decision lists no option");
                    apply_option(g.state, rollout_choice(g.state, policy, rng));
                }
                std::vector<int64_t> out(rng.mt, rng.mt + 624);
                out.push_back(rng.index);
                return out;
            },
            nb::arg("policy"), nb::arg("rng_state"),
            "Play the game out with a rollout policy (0 heuristic, 1 random) choosing with a Python generator "
            "given by its state (random.Random.getstate()[1]); returns the generator's state after.")
        .def(
            "resample",
            [](const Game& g, const std::vector<int>& plan, const std::vector<int64_t>& rng_state) {
                PyRandom rng;
                load_rng(rng, rng_state);
                auto game = std::make_unique<Game>(g);
                resample_hidden(game->state, plan, rng);
                std::vector<int64_t> after(rng.mt, rng.mt + 624);
                after.push_back(rng.index);
                return std::make_tuple(game.release(), after);
            },
            nb::arg("plan"), nb::arg("rng_state"), nb::rv_policy::take_ownership,
            "A copy of this game with its hidden parts drawn again by ``plan`` (kutnahora.native.resampling) "
            "with a Python generator given by its state; returns the copy and the generator's state after.")
        .def_prop_rw(
            "record_events", [](const Game& g) { return g.state.record_events; },
            [](Game& g, bool on) {
                g.state.record_events = on;
                g.state.event_log.clear();
            },
            "Whether apply records its events (see events()); off by default, and in clones as in the original.")
        .def("events", [](const Game& g) {
            std::vector<std::tuple<int, int, int, int, int, int>> out;
            for (const EventRecord& e : g.state.event_log) out.emplace_back(e.kind, e.seat, e.a, e.b, e.c, e.d);
            return out;
        }, "The events of the last apply, when recorded: (kind, seat, a, b, c, d) each.")
        .def(
            "encode",
            [](const Game& g, const Encoding& e, int viewer, bool uses_events, bool normalized, Vector out) {
                check_viewer(g, e, viewer);
                if (int(out.shape(0)) != e.size) throw nb::value_error("the vector has the wrong size");
                encode(g.state, e, viewer, uses_events, normalized, out.data());
            },
            nb::arg("encoding"), nb::arg("viewer"), nb::arg("uses_events"), nb::arg("normalized"), nb::arg("out"),
            "Write the viewer's observation vector (viewer -1: a spectator's) into out, a float32 array.")
        .def(
            "legal_ids",
            [](const Game& g, const ActionIds& ids) {
                std::vector<int> out;
                out.reserve(g.state.options.size());
                for (const Option& o : g.state.options) out.push_back(ids.id(o.key()));
                return out;
            },
            nb::arg("ids"), "The action ids of the options listed, in their order.")
        .def(
            "encode_list",
            [](const Game& g, const Encoding& e, int viewer, bool uses_events, bool normalized) {
                check_viewer(g, e, viewer);
                std::vector<float> values(size_t(e.size));
                encode(g.state, e, viewer, uses_events, normalized, values.data());
                return vector_list(values);
            },
            nb::arg("encoding"), nb::arg("viewer"), nb::arg("uses_events"), nb::arg("normalized"),
            "The viewer's observation vector as a list of floats (OpenSpiel's tensors).")
        .def_prop_ro("over", [](const Game& g) { return g.state.phase == OVER; })
        .def_prop_ro("pending_seat", [](const Game& g) { return g.state.has_pending ? g.state.pending_seat : -1; })
        .def_prop_ro("pending_kind", [](const Game& g) { return g.state.has_pending ? g.state.pending_kind : -1; })
        .def_prop_ro("version", [](const Game& g) { return g.state.version; })
        .def_prop_ro("drawn", [](const Game& g) { return g.state.drawn; },
                     "The mine tiles drawn for the pending choice (hidden from every other seat).")
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
