// A state written out as a flat list of ints and read back, in one order shared by both directions (and by
// kutnahora.native.convert, which turns the list into the engine's GameState and back).
#include "rules.hpp"

namespace kh {

namespace {

struct Writer {
    std::vector<int>& out;
    static constexpr bool reading = false;
    void v(int& x) { out.push_back(x); }
    void v(bool& x) { out.push_back(x ? 1 : 0); }
    int size(size_t n) {
        out.push_back(int(n));
        return int(n);
    }
};

struct Reader {
    const std::vector<int>& in;
    size_t i = 0;
    static constexpr bool reading = true;
    int next() {
        if (i >= in.size()) throw std::invalid_argument("the state ends too early");
        return in[i++];
    }
    void v(int& x) { x = next(); }
    void v(bool& x) { x = next() != 0; }
    int size(size_t) {
        int n = next();
        if (n < 0 || size_t(n) > in.size()) throw std::invalid_argument("a length in the state is out of range");
        return n;
    }
};

template <class IO> void ints(IO& io, std::vector<int>& xs) {
    int n = io.size(xs.size());
    if (IO::reading) xs.assign(n, 0);
    for (int& x : xs) io.v(x);
}

template <class IO> void squares(IO& io, std::vector<Sq>& xs) {
    int n = io.size(xs.size());
    if (IO::reading) xs.assign(n, Sq{0, 0});
    for (Sq& sq : xs) {
        int r = sq.r, c = sq.c;
        io.v(r);
        io.v(c);
        if (r < 0 || c < 0 || r >= GRID || c >= GRID) throw std::invalid_argument("a square is off the grid");
        sq = Sq{int8_t(r), int8_t(c)};
    }
}

template <class IO> void small(IO& io, int8_t& x) {
    int y = x;
    io.v(y);
    x = int8_t(y);
}

template <class IO> void square(IO& io, Sq& sq) {
    int r = sq.r, c = sq.c;
    io.v(r);
    io.v(c);
    if (r < 0 || c < 0 || r >= GRID || c >= GRID) throw std::invalid_argument("a square is off the grid");
    sq = Sq{int8_t(r), int8_t(c)};
}

template <class IO, class S> void state_io(IO& io, S& s) {
    io.v(s.phase);
    io.v(s.round);
    io.v(s.start_seat);
    io.v(s.turn_index);
    io.v(s.cards_left_in_turn);
    io.v(s.version);
    io.v(s.guild_setup_card);
    io.v(s.mine_setup_card);
    io.v(s.tax);
    io.v(s.mine_reshuffles);
    io.v(s.kept_tile);
    io.v(s.free_action);
    io.v(s.technology_taken);
    io.v(s.barbara_next);
    io.v(s.building_in_hand);
    for (int& x : s.deck_position) io.v(x);
    for (int& x : s.arms) io.v(x);
    for (int& x : s.patrician_bank) io.v(x);
    for (int& x : s.patrician_pool) io.v(x);
    for (int& x : s.council) io.v(x);
    // the pending decision
    io.v(s.has_pending);
    io.v(s.pending_seat);
    io.v(s.pending_kind);
    int n = io.size(s.options.size());
    if (IO::reading) s.options.assign(n, Option{0, 0, 0, 0});
    for (Option& o : s.options) {
        small(io, o.type);
        small(io, o.a);
        small(io, o.b);
        small(io, o.c);
    }
    n = io.size(s.agenda.size());
    if (IO::reading) s.agenda.assign(n, Step{0, 0, 0, {0, 0}});
    for (Step& st : s.agenda) {
        small(io, st.kind);
        small(io, st.seat);
        small(io, st.nargs);
        if (st.nargs < 0 || st.nargs > 2) throw std::invalid_argument("a step has too many arguments");
        for (int k = 0; k < st.nargs; ++k) {
            int a = st.args[k];
            io.v(a);
            st.args[k] = int16_t(a);
        }
    }
    ints(io, s.guild_sets_left);
    n = io.size(s.town_hall.size());
    if (IO::reading) s.town_hall.assign(n, {});
    for (auto& row : s.town_hall) {
        int m = io.size(row.size());
        if (IO::reading) row.assign(m, Stack{0, {}});
        for (Stack& stack : row) {
            io.v(stack.label);
            ints(io, stack.tiles);
        }
    }
    ints(io, s.red_stack);
    ints(io, s.town_discards);
    n = io.size(s.city.size());
    if (IO::reading) s.city.assign(n, CityTile{{0, 0}, 0, 0});
    for (CityTile& t : s.city) {
        square(io, t.sq);
        io.v(t.building);
        io.v(t.owner);
    }
    n = io.size(s.plots.size());
    if (IO::reading) s.plots.assign(n, PlotMark{{0, 0}, 0});
    for (PlotMark& p : s.plots) {
        square(io, p.sq);
        io.v(p.seat);
    }
    n = io.size(s.mines.size());
    if (IO::reading) s.mines.assign(n, MineMark{{0, 0}, 0, 0});
    for (MineMark& m : s.mines) {
        square(io, m.sq);
        io.v(m.tile);
        io.v(m.owner);
    }
    n = io.size(s.rocks.size());
    if (IO::reading) s.rocks.assign(n, RockMark{{0, 0}, 0});
    for (RockMark& r : s.rocks) {
        square(io, r.sq);
        io.v(r.tile);
    }
    ints(io, s.mine_stack);
    ints(io, s.mine_discard);
    n = io.size(s.mine_discards_seen.size());
    if (IO::reading) s.mine_discards_seen.assign(n, {});
    for (auto& seen : s.mine_discards_seen) ints(io, seen);
    ints(io, s.drawn);
    ints(io, s.events);
    io.v(s.has_final);
    n = io.size(s.final_scores.size());
    if (IO::reading) s.final_scores.assign(n, {});
    for (auto& parts : s.final_scores)
        for (int& x : parts) io.v(x);
    n = io.size(s.players.size());
    if (IO::reading) s.players.assign(n, Player());
    for (Player& p : s.players) {
        io.v(p.groschen);
        ints(io, p.guild_set);
        ints(io, p.guilds);
        io.v(p.reputation);
        io.v(p.points);
        for (int& x : p.production) io.v(x);
        io.v(p.mine_ore);
        for (int& x : p.houses_removed) io.v(x);
        squares(io, p.plots);
        ints(io, p.slots);
        io.v(p.pelicans);
        io.v(p.pelicans_used);
        io.v(p.miners_pool);
        io.v(p.miners_reserve);
        ints(io, p.hand);
        ints(io, p.buildings);
        squares(io, p.mines);
    }
    for (uint32_t& word : s.rng.mt) {
        int x = int(word);
        io.v(x);
        word = uint32_t(x);
    }
    io.v(s.rng.index);
}

void check(bool ok, const char* what) {
    if (!ok) throw std::invalid_argument(what);
}

// What the rules index with: every id, position and kind within its table (a state read in is not trusted).
void validate(const State& s) {
    const Components& c = *s.comp;
    int buildings = int(c.buildings.size()), tiles = int(c.tiles.size());
    auto building = [&](int id) { check(0 <= id && id < buildings, "a building id is out of range"); };
    auto tile = [&](int id) { check(0 <= id && id < tiles, "a mine tile id is out of range"); };
    check(s.phase >= GUILD_SETS && s.phase <= OVER, "no such phase");
    check(s.round >= 1 && s.round <= c.rounds, "the round is out of range");
    for (int d = 0; d < 2; ++d)
        check(0 <= s.deck_position[d] && s.deck_position[d] < int(c.decks[d].size()), "a deck position is out of range");
    for (int a : s.arms) check(0 <= a && a < c.arm_notches, "an arm is out of range");
    check(s.pending_kind >= D_GUILD_SET && s.pending_kind <= D_SCORE_BUILDING, "no such decision kind");
    check(0 <= s.pending_seat && s.pending_seat < c.players, "the pending seat is out of range");
    for (const Option& o : s.options) check(o.type >= O_PLAY && o.type <= O_SKIP, "no such option type");
    for (const Step& st : s.agenda) {
        check(st.kind >= S_MINE && st.kind <= S_NEXT_ROUND, "no such step");
        check(0 <= st.seat && st.seat < c.players, "a step's seat is out of range");
        if (st.kind == S_BUILDING_EFFECT || st.kind == S_HOUSE) building(st.args[0]);
    }
    check(s.guild_setup_card >= 1 && s.guild_setup_card <= int(c.guild_sets.size()), "no such guild setup card");
    for (const auto& row : s.town_hall)
        for (const Stack& stack : row) {
            check(!stack.tiles.empty() && 0 <= stack.label && stack.label < 10, "a town-hall stack is malformed");
            for (int id : stack.tiles) building(id);
        }
    for (int id : s.red_stack) building(id);
    for (int id : s.town_discards) building(id);
    for (const CityTile& t : s.city) building(t.building);
    for (const MineMark& m : s.mines) {
        tile(m.tile);
        check(0 <= m.owner && m.owner < c.players, "a mine's owner is out of range");
    }
    for (const RockMark& r : s.rocks) check(0 <= r.tile && r.tile < int(c.rock_stars.size()), "no such rock");
    for (int id : s.mine_stack) tile(id);
    for (int id : s.mine_discard) tile(id);
    for (int id : s.drawn) tile(id);
    if (s.kept_tile != NONE) tile(s.kept_tile);
    if (s.building_in_hand != NONE) building(s.building_in_hand);
    check(int(s.mine_discards_seen.size()) == c.players, "one list of seen discards per seat");
    for (int e : s.events) check(e == NONE || (0 <= e && e < int(c.event_cards.size())), "no such event card");
    check(s.technology_taken >= 0 && s.technology_taken <= int(c.technology_ids.size()), "bad technology level");
    check(s.barbara_next >= 1, "bad St. Barbara tile");
    for (const Player& p : s.players) {
        check(p.reputation >= -5 && p.reputation <= 9, "a reputation is off the track");
        check(p.guilds.empty() || p.guilds.size() == 3, "a board has three guild rows");
        for (int g : p.guilds) check(0 <= g && g < 6, "no such guild");
        for (int g : p.guild_set) check(0 <= g && g < 6, "no such guild");
        for (int id : p.slots) building(id);
        for (int id : p.buildings) building(id);
        check(p.plots.size() < 4, "too many plots");
        for (int h : p.houses_removed) check(0 <= h && h <= c.houses_per_row, "houses out of range");
    }
    check(s.rng.index >= 0 && s.rng.index <= 624, "the generator's index is out of range");
}

}  // namespace

void dump(const State& s, std::vector<int>& out) {
    Writer w{out};
    State& mutable_state = const_cast<State&>(s);  // the writer only reads
    state_io(w, mutable_state);
}

void load(State& s, std::shared_ptr<const Components> comp, const std::vector<int>& in) {
    State fresh;
    fresh.comp = comp;
    Reader r{in};
    state_io(r, fresh);
    if (r.i != in.size()) throw std::invalid_argument("the state is longer than expected");
    if (int(fresh.players.size()) != comp->players)
        throw std::invalid_argument("the state's player count differs from its components'");
    validate(fresh);
    fresh.rebuild_grids();
    s = std::move(fresh);
}

}  // namespace kh
