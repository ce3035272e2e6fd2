// The rules: setup, the flow of decisions and every action, round end and scoring. Each function mirrors
// the Python function of the same name in kutnahora.engine (flow, mine, town, barbara, income, rounds,
// economy, scoring, geometry, setup).
#include <algorithm>

#include "rules.hpp"

namespace kh {

namespace {

constexpr int REPUTATION_MIN = -5, REPUTATION_MAX = 9, POINTS_PER_STEP_BEYOND_TRACK = 2;
constexpr int CARDS_PER_TURN[3] = {2, 2, 1};
constexpr int PLOT_SURCHARGE[4] = {0, 0, 3, 8};
constexpr int COMMODITY_DECK[6] = {ORE_DECK, ORE_DECK, POPULATION_DECK, ORE_DECK, POPULATION_DECK, POPULATION_DECK};
constexpr int COMMODITY_ARM[6] = {3, 3, 0, 4, 1, 2};
constexpr int ACTION_STEPS[6] = {MINE, RIGHTS, PLOT, BUILDING, INCOME, ST_BARBARA};  // the dict's order
constexpr int OPPOSITE[4] = {2, 3, 0, 1};
constexpr int STEPS[4][2] = {{-1, 0}, {0, 1}, {1, 0}, {0, -1}};
constexpr int PUBLIC_LABEL = 6;  // stack labels: guilds 0..5, then 6 + colour

Option opt(int type, int a = -1, int b = -1, int c = -1) {
    return Option{int8_t(type), int8_t(a), int8_t(b), int8_t(c)};
}
const Option SKIP = opt(O_SKIP);

Step step(int kind, int seat) { return Step{int8_t(kind), int8_t(seat), 0, {0, 0}}; }
Step step(int kind, int seat, int a) { return Step{int8_t(kind), int8_t(seat), 1, {int16_t(a), 0}}; }
Step step(int kind, int seat, int a, int b) {
    return Step{int8_t(kind), int8_t(seat), 2, {int16_t(a), int16_t(b)}};
}

const Components& C(const State& s) { return *s.comp; }

void ev(State& s, int kind, int seat, int a = 0, int b = 0, int c = 0, int d = 0) {
    if (s.record_events) s.event_log.push_back(EventRecord{kind, seat, a, b, c, d});
}

void pose(State& s, int seat, int kind, std::vector<Option>&& options) {
    s.has_pending = true;
    s.pending_seat = seat;
    s.pending_kind = kind;
    s.options = std::move(options);
}

void yes_no(std::vector<Option>& out) {
    out.clear();
    out.push_back(opt(O_CONFIRM, 1));
    out.push_back(opt(O_CONFIRM, 0));
}

// ---- economy -----------------------------------------------------------------------------------------

const PriceCardData& front_card(const State& s, int deck) { return C(s).decks[deck][s.deck_position[deck]]; }

int price(const State& s, int commodity) {
    return front_card(s, COMMODITY_DECK[commodity]).prices[commodity][s.arms[COMMODITY_ARM[commodity]]];
}

bool no_market(const State& s, int commodity) {
    const auto& red_x = front_card(s, COMMODITY_DECK[commodity]).red_x;
    return std::find(red_x.begin(), red_x.end(), commodity) != red_x.end();
}

int income(const State& s, int seat) {
    const Player& p = s.players[seat];
    int total = 0;
    for (int c = 0; c < 6; ++c) total += p.production[c] * price(s, c);
    return total + p.mine_ore * price(s, ORE);
}

void move_arm(State& s, int arm) {
    if (s.arms[arm] < C(s).arm_notches - 1) {
        s.arms[arm] += 1;
        ev(s, V_ARM_MOVED, NONE, arm, s.arms[arm]);
    }
}

bool find_stack(const State& s, int label, int& row, int& col) {
    for (size_t r = 0; r < s.town_hall.size(); ++r)
        for (size_t c = 0; c < s.town_hall[r].size(); ++c)
            if (s.town_hall[r][c].label == label) {
                row = int(r);
                col = int(c);
                return true;
            }
    return false;
}

int take_from_stack(State& s, int row, int col) {
    auto& stacks = s.town_hall[row];
    Stack stack = std::move(stacks[col]);
    stacks.erase(stacks.begin() + col);
    int tile = stack.tiles.back();
    stack.tiles.pop_back();
    if (!stack.tiles.empty()) stacks.push_back(std::move(stack));
    return tile;
}

void town_builds(State& s, int commodity) {
    move_arm(s, COMMODITY_ARM[commodity]);
    int row, col;
    if (find_stack(s, commodity, row, col)) {
        int tile = take_from_stack(s, row, col);
        s.town_discards.push_back(tile);
        ev(s, V_TOWN_BUILT, NONE, tile, commodity);
    } else {
        ev(s, V_TOWN_BUILT_GONE, NONE, commodity);
    }
}

void advance_deck(State& s, int deck, int amount) {
    int last = int(C(s).decks[deck].size()) - 1;
    for (int k = 0; k < amount; ++k) {
        int position = s.deck_position[deck];
        if (position >= last) return;
        s.deck_position[deck] = position + 1;
        ev(s, V_DECK_ADVANCED, NONE, deck, position + 1);
        for (int commodity : front_card(s, deck).town_builds) town_builds(s, commodity);
    }
}

void change_reputation(State& s, int seat, int delta) {
    if (delta == 0) return;
    Player& p = s.players[seat];
    int target = p.reputation + delta;
    int beyond = 0;
    if (target > REPUTATION_MAX) {
        beyond = target - REPUTATION_MAX;
        p.points += POINTS_PER_STEP_BEYOND_TRACK * beyond;
        target = REPUTATION_MAX;
    } else if (target < REPUTATION_MIN) {
        beyond = REPUTATION_MIN - target;
        p.points -= POINTS_PER_STEP_BEYOND_TRACK * beyond;
        target = REPUTATION_MIN;
    }
    p.reputation = target;
    ev(s, V_REPUTATION, seat, delta, target, beyond);
}

// why: 0 a mine, 1 a building (a: its tile), 2 St. Barbara, 3 a house, 4 St. Barbara 10 (a: the tile)
void score(State& s, int seat, int points, int why, int tile = 0) {
    if (points) {
        s.players[seat].points += points;
        ev(s, V_POINTS, seat, points, why, tile);
    }
}

// why: 0 a permit for miners, 1 wood for a mine, 2 building rights, 3 a plot, 4 wood for a building (a:
// its tile), 5 a seat on the council, 6 taxes
void pay(State& s, int seat, int amount, int why, int tile = 0) {
    if (!amount) return;
    if (s.players[seat].groschen < amount) throw std::logic_error("a cost was offered that the seat cannot pay");
    s.players[seat].groschen -= amount;
    ev(s, V_PAID, seat, amount, why, tile);
}

void raise_tax(State& s, int amount) {
    int now = std::min(C(s).tax_limit, s.tax + amount);
    if (now != s.tax) {
        s.tax = now;
        ev(s, V_TAX, NONE, now);
    }
}

void gain_production(State& s, int seat, int commodity, int amount, bool mine = false) {
    if (amount <= 0) return;
    Player& p = s.players[seat];
    if (mine)
        p.mine_ore += amount;
    else
        p.production[commodity] += amount;
    ev(s, V_PRODUCTION, seat, amount, commodity);
    if (commodity == ORE) advance_deck(s, ORE_DECK, amount);
}

// ---- geometry ----------------------------------------------------------------------------------------

int matching_dots(const State& s, Sq sq) {
    const Components& c = C(s);
    const BuildingData& b = c.buildings[s.city_grid[sq.r][sq.c]];
    int total = 0;
    for (int side = 0; side < 4; ++side) {
        if (!b.dots[side]) continue;
        int r = sq.r + STEPS[side][0], col = sq.c + STEPS[side][1];
        if (r >= 0 && col >= 0 && r < GRID && col < GRID && c.usable[r][col]) {
            int other = s.city_grid[r][col];
            if (other >= 0 && c.buildings[other].dots[OPPOSITE[side]]) total += 1;
        } else if (c.edge_dot[sq.r][sq.c][side]) {
            total += 1;
        }
    }
    return total;
}

int public_neighbours(const State& s, Sq sq) {
    int count = 0;
    for (Sq other : C(s).neighbours[sq.r][sq.c])
        if (s.city_grid[other.r][other.c] >= 0 && s.city_owner[other.r][other.c] < 0) count += 1;
    return count;
}

void owned_squares(const State& s, int seat, std::vector<Sq>& out) {
    out.clear();
    for (const CityTile& t : s.city)
        if (t.owner == seat) out.push_back(t.sq);
    std::sort(out.begin(), out.end());
}

// ---- mines -------------------------------------------------------------------------------------------

// costs[r][c] = wood cost of an open square, -1 when not open
void mine_square_costs(const State& s, int costs[GRID][GRID]) {
    const Components& c = C(s);
    for (int r = 0; r < GRID; ++r)
        for (int col = 0; col < GRID; ++col) costs[r][col] = -1;
    for (Sq sq : c.entrances)
        if (s.mine_grid[sq.r][sq.c] < 0 && s.rock_grid[sq.r][sq.c] < 0) costs[sq.r][sq.c] = c.entrance_cost;
    for (const MineMark& m : s.mines) {
        int wood = c.tiles[m.tile].wood_cost;
        const int others[3][2] = {{m.sq.r, m.sq.c - 1}, {m.sq.r, m.sq.c + 1}, {m.sq.r + 1, m.sq.c}};
        for (const auto& o : others) {
            int r = o[0], col = o[1];
            if (!(0 <= r && r < c.mine_rows && 0 <= col && col < c.mine_columns)) continue;
            if (s.mine_grid[r][col] >= 0 || s.rock_grid[r][col] >= 0) continue;
            if (costs[r][col] < wood) costs[r][col] = wood;
        }
    }
}

bool any_mine_square(const State& s) {
    int costs[GRID][GRID];
    mine_square_costs(s, costs);
    for (int r = 0; r < GRID; ++r)
        for (int c = 0; c < GRID; ++c)
            if (costs[r][c] >= 0) return true;
    return false;
}

int draws_per_mine_action(const State& s) {
    if (s.technology_taken == 0) return 1;
    return C(s).tiles[C(s).technology_ids[s.technology_taken - 1]].draws;
}

bool can_refill(const State& s, int seat) {
    const Player& p = s.players[seat];
    return p.miners_pool < C(s).miner_pool_size && p.miners_reserve > 0 && p.groschen >= price(s, PERMITS);
}

bool mine_feasible(const State& s, int seat, bool free) {
    const Player& p = s.players[seat];
    bool tiles = !s.mine_stack.empty() || !s.mine_discard.empty();
    if (free) return tiles && any_mine_square(s) && p.miners_pool + p.miners_reserve > 0;
    return can_refill(s, seat) || (tiles && p.miners_pool > 0);
}

void refill_pool(State& s, int seat) {
    Player& p = s.players[seat];
    pay(s, seat, price(s, PERMITS), 0);
    int moved = std::min(C(s).miner_pool_size - p.miners_pool, p.miners_reserve);
    p.miners_pool += moved;
    p.miners_reserve -= moved;
    ev(s, V_MINERS, seat, moved);
}

void affordable_squares(const State& s, int seat, bool free, std::vector<Sq>& out) {
    int wood = free ? 0 : price(s, WOOD);
    int budget = s.players[seat].groschen;
    int costs[GRID][GRID];
    mine_square_costs(s, costs);
    out.clear();
    for (int r = 0; r < GRID; ++r)
        for (int c = 0; c < GRID; ++c)
            if (costs[r][c] >= 0 && costs[r][c] * wood <= budget) out.push_back(Sq{int8_t(r), int8_t(c)});
}

void step_mine(State& s, const Step& st) {
    bool free = st.args[0] != 0;
    int seat = st.seat;
    if (free && !mine_feasible(s, seat, true)) {
        ev(s, V_NO_EFFECT, seat, 0);  // can open no mine
        return;
    }
    s.agenda.push_back(step(S_MINE_DRAW, seat, int(free)));
    if (free) return;
    if (s.players[seat].miners_pool == 0) {
        refill_pool(s, seat);
    } else if (can_refill(s, seat)) {
        std::vector<Option> options;
        yes_no(options);
        pose(s, seat, D_REFILL_MINERS, std::move(options));
    }
}

void mine_tile_options(const State& s, int seat, std::vector<Option>& out) {
    out.clear();
    std::vector<Sq> squares;
    affordable_squares(s, seat, s.free_action, squares);
    if (!squares.empty()) {
        std::vector<int> drawn = s.drawn;
        std::sort(drawn.begin(), drawn.end());
        for (int t : drawn) out.push_back(opt(O_TILE, t));
    }
    out.push_back(SKIP);
}

void mine_square_options(const State& s, int seat, std::vector<Option>& out) {
    std::vector<Sq> squares;
    affordable_squares(s, seat, s.free_action, squares);
    out.clear();
    for (Sq sq : squares) out.push_back(opt(O_SQUARE, sq.r, sq.c));
}

void tech_square_options(const State& s, std::vector<Option>& out) {
    int costs[GRID][GRID];
    mine_square_costs(s, costs);
    out.clear();
    for (int r = 0; r < GRID; ++r)
        for (int c = 0; c < GRID; ++c)
            if (costs[r][c] >= 0) out.push_back(opt(O_SQUARE, r, c));
    out.push_back(SKIP);
}

void resolve_refill(State& s, int seat, const Option& o) {
    if (o.type == O_CONFIRM && o.a) refill_pool(s, seat);
}

void step_mine_draw(State& s, const Step& st) {
    bool free = st.args[0] != 0;
    std::vector<int> drawn;
    int draws = draws_per_mine_action(s);
    for (int k = 0; k < draws; ++k) {
        if (s.mine_stack.empty()) {
            if (s.mine_discard.empty()) break;
            s.mine_stack.swap(s.mine_discard);
            s.mine_discard.clear();
            s.mine_reshuffles += 1;
            for (auto& seen : s.mine_discards_seen) seen.clear();
            s.rng.shuffle(s.mine_stack);
            ev(s, V_MINE_RESHUFFLED, NONE);
        }
        drawn.push_back(s.mine_stack.back());
        s.mine_stack.pop_back();
    }
    s.drawn = std::move(drawn);
    s.free_action = free;
    ev(s, V_MINE_DRAWN, st.seat, int(s.drawn.size()));
    std::vector<Option> options;
    mine_tile_options(s, st.seat, options);
    pose(s, st.seat, D_MINE_TILE, std::move(options));
}

void resolve_mine_tile(State& s, int seat, const Option& o) {
    int kept = o.type == O_TILE ? o.a : NONE;
    int discarded = 0;
    for (int t : s.drawn)
        if (t != kept) {
            s.mine_discard.push_back(t);
            s.mine_discards_seen[seat].push_back(t);
            ++discarded;
        }
    s.drawn.clear();
    if (discarded) ev(s, V_MINE_DISCARDED, seat, discarded);
    if (kept == NONE) return;
    s.kept_tile = kept;
    std::vector<Option> options;
    mine_square_options(s, seat, options);
    pose(s, seat, D_MINE_SQUARE, std::move(options));
}

void place_mine(State& s, int seat, Sq sq, bool from_reserve) {
    int tile_id = s.kept_tile;
    s.kept_tile = NONE;
    Player& p = s.players[seat];
    if (from_reserve && p.miners_reserve > 0)
        p.miners_reserve -= 1;
    else
        p.miners_pool -= 1;
    s.mines.push_back(MineMark{sq, tile_id, seat});
    s.mine_grid[sq.r][sq.c] = int8_t(tile_id);
    p.mines.push_back(sq);
    const MineTileData& tile = C(s).tiles[tile_id];
    ev(s, V_MINE_PLACED, seat, tile_id, sq.r, sq.c);
    gain_production(s, seat, ORE, tile.ore, true);
    advance_deck(s, POPULATION_DECK, tile.population);
    score(s, seat, tile.points, 0);
}

void resolve_mine_square(State& s, int seat, const Option& o) {
    Sq sq{o.a, o.b};
    if (!s.free_action) {
        int costs[GRID][GRID];
        mine_square_costs(s, costs);
        pay(s, seat, costs[sq.r][sq.c] * price(s, WOOD), 1);
    }
    place_mine(s, seat, sq, s.free_action);
}

void step_technology(State& s, const Step& st) {
    int seat = st.seat;
    const Player& p = s.players[seat];
    if (s.technology_taken >= int(C(s).technology_ids.size())) {
        ev(s, V_TECHNOLOGY, seat, 0);
        return;
    }
    int tile = C(s).technology_ids[s.technology_taken];
    s.technology_taken += 1;
    if (p.miners_pool + p.miners_reserve == 0) {
        ev(s, V_TECHNOLOGY, seat, 1, s.technology_taken);
        return;
    }
    ev(s, V_TECHNOLOGY, seat, 2, s.technology_taken);
    std::vector<Option> options;
    tech_square_options(s, options);
    if (options.size() == 1) {
        ev(s, V_TECHNOLOGY, seat, 3);
        return;
    }
    s.kept_tile = tile;
    pose(s, seat, D_TECH_SQUARE, std::move(options));
}

void resolve_tech_square(State& s, int seat, const Option& o) {
    if (o.type == O_SKIP) {
        s.kept_tile = NONE;
        ev(s, V_TECHNOLOGY, seat, 4);
        return;
    }
    place_mine(s, seat, Sq{o.a, o.b}, true);
}

// ---- town: rights ------------------------------------------------------------------------------------

bool has_guild(const Player& p, int guild) { return std::find(p.guilds.begin(), p.guilds.end(), guild) != p.guilds.end(); }

int guild_row(const Player& p, int guild) {
    return int(std::find(p.guilds.begin(), p.guilds.end(), guild) - p.guilds.begin());
}

int column_cost(const State& s, int column) {
    const auto& cost = C(s).town_hall_costs[column];
    return cost[0] == 0 ? cost[1] : cost[1] * price(s, PERMITS);
}

// nothing: 1 can take no building tile, 2 can claim no plot, 3 can build nothing
void declinable_pose(State& s, int seat, int kind, std::vector<Option>&& options, bool free, int nothing) {
    if (options.empty()) {  // the action has no effect
        ev(s, V_NO_EFFECT, seat, nothing);
        return;
    }
    s.free_action = free;
    if (free) options.push_back(SKIP);
    pose(s, seat, kind, std::move(options));
}

void rights_options(const State& s, int seat, bool free, std::vector<Option>& out) {
    out.clear();
    const Player& p = s.players[seat];
    if (int(p.slots.size()) >= C(s).building_slots) return;
    for (const auto& row : s.town_hall)
        for (size_t col = 0; col < row.size(); ++col) {
            int tile = row[col].tiles.back();
            const BuildingData& b = C(s).buildings[tile];
            if (b.guild >= 0 && !has_guild(p, b.guild)) continue;
            int cost = free ? 0 : column_cost(s, int(col));
            if (cost <= p.groschen) out.push_back(opt(O_TILE, tile));
        }
}

bool rights_feasible(const State& s, int seat) {
    const Player& p = s.players[seat];
    if (int(p.slots.size()) >= C(s).building_slots) return false;
    for (const auto& row : s.town_hall)
        for (size_t col = 0; col < row.size(); ++col) {
            int guild = C(s).buildings[row[col].tiles.back()].guild;
            if ((guild < 0 || has_guild(p, guild)) && column_cost(s, int(col)) <= p.groschen) return true;
        }
    return false;
}

void step_rights(State& s, const Step& st) {
    bool free = st.args[0] != 0;
    std::vector<Option> options;
    rights_options(s, st.seat, free, options);
    declinable_pose(s, st.seat, D_RIGHTS_TILE, std::move(options), free, 1);
}

void take_rights(State& s, int seat, int tile, bool free) {
    for (size_t r = 0; r < s.town_hall.size(); ++r)
        for (size_t c = 0; c < s.town_hall[r].size(); ++c)
            if (s.town_hall[r][c].tiles.back() == tile) {
                if (!free) pay(s, seat, column_cost(s, int(c)), 2);
                take_from_stack(s, int(r), int(c));
                s.players[seat].slots.push_back(tile);
                ev(s, V_RIGHTS, seat, tile);
                return;
            }
    throw std::logic_error("the tile is not on top of a town-hall stack");
}

void resolve_rights(State& s, int seat, const Option& o) {
    if (o.type == O_TILE) take_rights(s, seat, o.a, s.free_action);
}

// ---- town: plots -------------------------------------------------------------------------------------

// costs[r][c] = groschen for a claimable square, -1 otherwise; seat < 0: before the reputation discount
void plot_costs(const State& s, int seat, bool free, int costs[GRID][GRID]) {
    const Components& c = C(s);
    bool any = false;
    for (int r = 0; r < GRID; ++r)
        for (int col = 0; col < GRID; ++col) costs[r][col] = -1;
    if (!free) {
        for (const CityTile& t : s.city) {
            int cost = c.buildings[t.building].plot_cost;
            for (Sq o : c.neighbours[t.sq.r][t.sq.c])
                if (s.city_grid[o.r][o.c] < 0 && s.plot_grid[o.r][o.c] < 0 && costs[o.r][o.c] < cost) {
                    costs[o.r][o.c] = cost;
                    any = true;
                }
        }
    }
    if (!any) {
        int base = free ? 0 : c.default_plot_cost;
        for (Sq sq : c.board_squares)
            if (s.city_grid[sq.r][sq.c] < 0 && s.plot_grid[sq.r][sq.c] < 0) costs[sq.r][sq.c] = base;
        if (free) return;
    }
    if (seat >= 0 && s.players[seat].reputation >= 3)
        for (int r = 0; r < GRID; ++r)
            for (int col = 0; col < GRID; ++col)
                if (costs[r][col] >= 0) costs[r][col] = 1;
}

void plot_options(const State& s, int seat, bool free, std::vector<Option>& out) {
    out.clear();
    const Player& p = s.players[seat];
    if (int(p.plots.size()) >= C(s).plot_markers) return;
    int costs[GRID][GRID];
    plot_costs(s, seat, free, costs);
    for (int r = 0; r < GRID; ++r)
        for (int c = 0; c < GRID; ++c)
            if (costs[r][c] >= 0 && costs[r][c] <= p.groschen) out.push_back(opt(O_SQUARE, r, c));
}

bool plot_feasible(const State& s, int seat) {
    const Components& c = C(s);
    const Player& p = s.players[seat];
    if (int(p.plots.size()) >= c.plot_markers) return false;
    int cheapest = -1;
    int costs[GRID][GRID];
    bool any = false;
    for (int r = 0; r < GRID; ++r)
        for (int col = 0; col < GRID; ++col) costs[r][col] = -1;
    for (const CityTile& t : s.city) {
        int cost = c.buildings[t.building].plot_cost;
        for (Sq o : c.neighbours[t.sq.r][t.sq.c])
            if (s.city_grid[o.r][o.c] < 0 && s.plot_grid[o.r][o.c] < 0 && costs[o.r][o.c] < cost) {
                costs[o.r][o.c] = cost;
                any = true;
            }
    }
    if (any) {
        for (int r = 0; r < GRID; ++r)
            for (int col = 0; col < GRID; ++col)
                if (costs[r][col] >= 0 && (cheapest < 0 || costs[r][col] < cheapest)) cheapest = costs[r][col];
    } else {
        bool open = false;
        for (Sq sq : c.board_squares)
            if (s.city_grid[sq.r][sq.c] < 0 && s.plot_grid[sq.r][sq.c] < 0) {
                open = true;
                break;
            }
        if (!open) return false;
        cheapest = c.default_plot_cost;
    }
    if (p.reputation >= 3) cheapest = 1;
    return cheapest <= p.groschen;
}

void step_plot(State& s, const Step& st) {
    bool free = st.args[0] != 0;
    std::vector<Option> options;
    plot_options(s, st.seat, free, options);
    declinable_pose(s, st.seat, D_PLOT_SQUARE, std::move(options), free, 2);
}

void resolve_plot(State& s, int seat, const Option& o) {
    if (o.type != O_SQUARE) return;
    Sq sq{o.a, o.b};
    int costs[GRID][GRID];
    plot_costs(s, seat, s.free_action, costs);
    pay(s, seat, costs[sq.r][sq.c], 3);
    s.players[seat].plots.push_back(sq);
    s.plots.push_back(PlotMark{sq, seat});
    s.plot_grid[sq.r][sq.c] = int8_t(seat);
    ev(s, V_PLOT, seat, sq.r, sq.c);
}

// ---- town: buildings ---------------------------------------------------------------------------------

int house_row(const State& s, int seat, int tile) {
    int guild = C(s).buildings[tile].guild;
    return guild < 0 ? NONE : guild_row(s.players[seat], guild);
}

void buildable_tiles(const State& s, int seat, bool free, std::vector<Option>& out) {
    out.clear();
    const Player& p = s.players[seat];
    if (p.plots.empty()) return;
    int wood = free ? 0 : price(s, WOOD);
    std::vector<int> tiles = p.slots;
    std::sort(tiles.begin(), tiles.end());
    tiles.erase(std::unique(tiles.begin(), tiles.end()), tiles.end());
    for (int tile : tiles) {
        const BuildingData& b = C(s).buildings[tile];
        if (b.guild >= 0) {
            if (no_market(s, b.guild)) continue;  // a guild's commodity has the guild's number
            if (p.houses_removed[guild_row(p, b.guild)] >= C(s).houses_per_row) continue;
        }
        if (b.wood_cost * wood <= p.groschen) out.push_back(opt(O_TILE, tile));
    }
}

bool building_feasible(const State& s, int seat) {
    const Player& p = s.players[seat];
    if (p.plots.empty()) return false;
    int wood = price(s, WOOD);
    for (int tile : p.slots) {
        const BuildingData& b = C(s).buildings[tile];
        if (b.guild >= 0) {
            if (no_market(s, b.guild)) continue;
            if (p.houses_removed[guild_row(p, b.guild)] >= C(s).houses_per_row) continue;
        }
        if (b.wood_cost * wood <= p.groschen) return true;
    }
    return false;
}

void step_building(State& s, const Step& st) {
    bool free = st.args[0] != 0;
    std::vector<Option> options;
    buildable_tiles(s, st.seat, free, options);
    declinable_pose(s, st.seat, D_BUILD_TILE, std::move(options), free, 3);
}

void build_square_options(const State& s, int seat, std::vector<Option>& out) {
    std::vector<Sq> plots = s.players[seat].plots;
    std::sort(plots.begin(), plots.end());
    out.clear();
    for (Sq sq : plots) out.push_back(opt(O_SQUARE, sq.r, sq.c));
}

void resolve_build_tile(State& s, int seat, const Option& o) {
    if (o.type != O_TILE) return;
    s.building_in_hand = o.a;
    std::vector<Option> options;
    build_square_options(s, seat, options);
    pose(s, seat, D_BUILD_SQUARE, std::move(options));
}

void resolve_build_square(State& s, int seat, const Option& o) {
    int tile = s.building_in_hand;
    s.building_in_hand = NONE;
    Sq sq{o.a, o.b};
    const BuildingData& b = C(s).buildings[tile];
    Player& p = s.players[seat];
    if (!s.free_action) pay(s, seat, b.wood_cost * price(s, WOOD), 4, tile);
    p.plots.erase(std::find(p.plots.begin(), p.plots.end(), sq));
    for (auto it = s.plots.begin(); it != s.plots.end(); ++it)
        if (it->sq == sq) {
            s.plots.erase(it);
            break;
        }
    s.plot_grid[sq.r][sq.c] = -1;
    p.slots.erase(std::find(p.slots.begin(), p.slots.end(), tile));
    int owner = b.color >= 0 ? NONE : seat;
    s.city.push_back(CityTile{sq, tile, owner});
    s.city_grid[sq.r][sq.c] = int8_t(tile);
    s.city_owner[sq.r][sq.c] = int8_t(owner);
    ev(s, V_BUILT, seat, tile, sq.r, sq.c);
    if (b.guild >= 0) {
        p.buildings.push_back(tile);
        s.agenda.push_back(step(S_HOUSE, seat, tile));
    }
    for (int index = int(b.effects.size()) - 1; index >= 0; --index)
        s.agenda.push_back(step(S_BUILDING_EFFECT, seat, tile, index));
    if (b.guild >= 0) gain_production(s, seat, b.guild, b.production);
}

void removable_rows(const State& s, int seat, int keep, std::vector<Option>& out) {
    const Player& p = s.players[seat];
    int limit = C(s).houses_per_row;
    for (size_t row = 0; row < p.guilds.size(); ++row)
        if (p.houses_removed[row] < limit - (int(row) == keep ? 1 : 0)) out.push_back(opt(O_GUILD, p.guilds[row]));
}

void remove_house(State& s, int seat, int row) {
    s.players[seat].houses_removed[row] += 1;
    ev(s, V_HOUSE_REMOVED, seat, s.players[seat].guilds[row]);
}

void patrician_to_pool(State& s, int color) {
    if (s.patrician_bank[color] > 0) {
        s.patrician_bank[color] -= 1;
        s.patrician_pool[color] += 1;
        ev(s, V_PATRICIAN, NONE, color);
    }
}

void flip_st_barbara(State& s) {
    const auto& tiles = C(s).barbara_tiles;
    if (s.barbara_next > int(tiles.size())) return;
    const auto& tile = tiles[s.barbara_next - 1];
    ev(s, V_BARBARA_FLIPPED, NONE, s.barbara_next - 1);
    s.barbara_next += 1;
    raise_tax(s, tile[1]);
}

void step_building_effect(State& s, const Step& st) {
    int seat = st.seat, tile = st.args[0];
    const BuildingData& b = C(s).buildings[tile];
    const Effect& e = b.effects[st.args[1]];
    switch (e.kind) {
        case E_ARM: move_arm(s, COMMODITY_ARM[b.guild]); break;
        case E_MINING_TECHNOLOGY: s.agenda.push_back(step(S_TECHNOLOGY, seat)); break;
        case E_ORE_DECK: advance_deck(s, ORE_DECK, e.amount); break;
        case E_POPULATION_DECK: advance_deck(s, POPULATION_DECK, e.amount); break;
        case E_POINTS: score(s, seat, e.amount, 1, tile); break;
        case E_REPUTATION: change_reputation(s, seat, e.amount); break;
        case E_PELICANS:
            s.players[seat].pelicans += e.amount;
            ev(s, V_PELICANS, seat, e.amount);
            break;
        case E_TAX: raise_tax(s, e.amount); break;
        case E_PATRICIAN: patrician_to_pool(s, e.color); break;
        case E_REMOVE_HOUSE: {
            std::vector<Option> options;
            removable_rows(s, seat, house_row(s, seat, tile), options);
            options.push_back(SKIP);
            if (options.size() > 1) pose(s, seat, D_REMOVE_HOUSE, std::move(options));
            break;
        }
        case E_FLIP_ST_BARBARA: flip_st_barbara(s); break;
    }
}

void resolve_remove_house(State& s, int seat, const Option& o) {
    if (o.type == O_GUILD) remove_house(s, seat, guild_row(s.players[seat], o.a));
}

void public_reward_choices(const State& s, int seat, std::vector<Option>& out) {
    out.clear();
    if (int(s.players[seat].slots.size()) < C(s).building_slots)
        for (const auto& row : s.town_hall)
            for (const Stack& stack : row)
                if (stack.label >= PUBLIC_LABEL) out.push_back(opt(O_TILE, stack.tiles.back()));
    out.push_back(SKIP);
}

void step_house(State& s, const Step& st) {
    int seat = st.seat;
    int row = house_row(s, seat, st.args[0]);
    Player& p = s.players[seat];
    int column = p.houses_removed[row];
    p.houses_removed[row] += 1;
    const int* reward = C(s).house_rewards[row][column];
    ev(s, V_HOUSE, seat, p.guilds[row], reward[0]);
    switch (reward[0]) {
        case R_PUBLIC_BUILDING: {
            std::vector<Option> options;
            public_reward_choices(s, seat, options);
            if (options.size() > 1) pose(s, seat, D_PUBLIC_REWARD, std::move(options));
            break;
        }
        case R_PELICAN: p.pelicans += std::max(1, reward[1]); break;
        case R_REPUTATION: change_reputation(s, seat, reward[1]); break;
        case R_POINTS: score(s, seat, reward[1], 3); break;
    }
}

void resolve_public_reward(State& s, int seat, const Option& o) {
    if (o.type == O_TILE) take_rights(s, seat, o.a, true);
}

// ---- income ------------------------------------------------------------------------------------------

void seat_patrician_options(const State& s, std::vector<Option>& out) {
    out.clear();
    for (int c = 0; c < 4; ++c)
        if (s.patrician_pool[c] > 0) out.push_back(opt(O_PATRICIAN, c));
    out.push_back(SKIP);
}

void step_income(State& s, const Step& st) {
    int seat = st.seat;
    Player& p = s.players[seat];
    int gained = income(s, seat);
    p.groschen += gained;
    ev(s, V_INCOME, seat, gained);
    if (p.groschen >= C(s).patrician_seat_cost) {
        std::vector<Option> options;
        seat_patrician_options(s, options);
        if (options.size() > 1) pose(s, seat, D_SEAT_PATRICIAN, std::move(options));
    }
}

void resolve_seat_patrician(State& s, int seat, const Option& o) {
    if (o.type != O_PATRICIAN) return;
    pay(s, seat, C(s).patrician_seat_cost, 5);
    s.patrician_pool[o.a] -= 1;
    s.council[o.a] += 1;
    ev(s, V_COUNCIL, seat, o.a, 0);
}

// ---- St. Barbara -------------------------------------------------------------------------------------

int barbara_loss(int effect) {
    return effect == B_HOUSE_FOR_PRODUCTION ? 1 : effect == B_DOUBLE_INCOME ? 2 : 0;
}

void step_st_barbara(State& s, const Step& st) {
    int seat = st.seat;
    Player& p = s.players[seat];
    p.pelicans -= 1;
    p.pelicans_used += 1;
    const auto& tiles = C(s).barbara_tiles;
    if (s.barbara_next > int(tiles.size())) {
        ev(s, V_ST_BARBARA, seat, -1);
        change_reputation(s, seat, 2);
        return;
    }
    int effect = tiles[s.barbara_next - 1][0];
    ev(s, V_ST_BARBARA, seat, s.barbara_next - 1);
    s.barbara_next += 1;
    std::vector<Option> options;
    switch (effect) {
        case B_REPUTATION: change_reputation(s, seat, 2); break;
        case B_FREE_RIGHTS:
            change_reputation(s, seat, 1);
            s.agenda.push_back(step(S_RIGHTS, seat, 1));
            break;
        case B_HOUSE_FOR_PRODUCTION:
            change_reputation(s, seat, -barbara_loss(effect));
            removable_rows(s, seat, NONE, options);
            options.push_back(SKIP);
            if (options.size() > 1) pose(s, seat, D_BARBARA_HOUSE, std::move(options));
            break;
        case B_FREE_PLOT:
            change_reputation(s, seat, 1);
            s.agenda.push_back(step(S_PLOT, seat, 1));
            break;
        case B_DOUBLE_INCOME:
            change_reputation(s, seat, -barbara_loss(effect));
            s.agenda.push_back(step(S_INCOME, seat));
            s.agenda.push_back(step(S_INCOME, seat));
            break;
        case B_SEAT_FROM_BANK:
            score(s, seat, 2, 2);
            for (int c = 0; c < 4; ++c)
                if (s.patrician_bank[c] > 0) options.push_back(opt(O_PATRICIAN, c));
            options.push_back(SKIP);
            if (options.size() > 1) pose(s, seat, D_BARBARA_PATRICIAN, std::move(options));
            break;
        case B_PUBLIC_NEIGHBOURS: {
            std::vector<Sq> owned;
            owned_squares(s, seat, owned);
            int gained = 0;
            for (Sq sq : owned) gained += public_neighbours(s, sq);
            change_reputation(s, seat, gained);
            break;
        }
        case B_FREE_BUILDING:
            score(s, seat, 1, 2);
            s.agenda.push_back(step(S_BUILDING, seat, 1));
            break;
        case B_DOUBLE_MINE:
            s.agenda.push_back(step(S_MINE, seat, 1));
            s.agenda.push_back(step(S_MINE, seat, 1));
            break;
        case B_SCORE_BUILDING: {
            std::vector<Sq> owned;
            owned_squares(s, seat, owned);
            for (Sq sq : owned) options.push_back(opt(O_TILE, s.city_grid[sq.r][sq.c]));
            options.push_back(SKIP);
            if (options.size() > 1) pose(s, seat, D_SCORE_BUILDING, std::move(options));
            break;
        }
        case B_FINAL: score(s, seat, 5, 2); break;
    }
}

void resolve_barbara_house(State& s, int seat, const Option& o) {
    if (o.type != O_GUILD) return;
    remove_house(s, seat, guild_row(s.players[seat], o.a));
    gain_production(s, seat, o.a, 2);
}

void resolve_barbara_patrician(State& s, int seat, const Option& o) {
    if (o.type != O_PATRICIAN) return;
    s.patrician_bank[o.a] -= 1;
    s.council[o.a] += 1;
    ev(s, V_COUNCIL, seat, o.a, 1);
}

void resolve_score_building(State& s, int seat, const Option& o) {
    if (o.type != O_TILE) return;
    for (const CityTile& t : s.city)
        if (t.building == o.a) {
            score(s, seat, matching_dots(s, t.sq), 4, t.building);
            return;
        }
}

// ---- scoring -----------------------------------------------------------------------------------------

void patrician_points(const State& s, int seat, int out[4]) {
    const Player& p = s.players[seat];
    std::vector<Sq> owned;
    owned_squares(s, seat, owned);
    int green = 0;
    for (Sq sq : owned) green += public_neighbours(s, sq);
    int silver = (p.pelicans_used / 2) * 3;
    int rows = C(s).mine_rows;
    std::vector<int> per_row(rows, 0);
    for (Sq sq : p.mines) per_row[sq.r] += 1;
    int least = rows ? *std::min_element(per_row.begin(), per_row.end()) : 0;
    int yellow = least >= 2 ? 4 : least >= 1 ? 2 : 0;
    int empty_columns = 0;
    for (int column = 0; column < C(s).houses_per_row; ++column) {
        bool all = true;
        for (int removed : p.houses_removed) all = all && removed > column;
        if (all) empty_columns += 1;
    }
    out[GREEN] = green * s.council[GREEN];
    out[SILVER_COLOR] = silver * s.council[SILVER_COLOR];
    out[YELLOW] = yellow * s.council[YELLOW];
    out[RED] = empty_columns * 3 * s.council[RED];
}

void score_patricians(State& s) {
    for (size_t seat = 0; seat < s.players.size(); ++seat) {
        int gained[4];
        patrician_points(s, int(seat), gained);
        int total = gained[0] + gained[1] + gained[2] + gained[3];
        s.players[seat].points += total;
        if (total) ev(s, V_PATRICIAN_SCORING, int(seat), gained[0], gained[1], gained[2], gained[3]);
    }
}

void mine_row_points(const State& s, std::vector<int>& points) {
    const Components& c = C(s);
    int n = int(s.players.size());
    std::vector<int> totals = c.row_stars;
    std::vector<std::vector<int>> by_seat(n, std::vector<int>(c.mine_rows, 0));
    for (const RockMark& r : s.rocks) totals[r.sq.r] += c.rock_stars[r.tile];
    for (const MineMark& m : s.mines) {
        int stars = c.tiles[m.tile].stars;
        totals[m.sq.r] += stars;
        by_seat[m.owner][m.sq.r] += stars;
    }
    points.assign(n, 0);
    for (int row = 0; row < c.mine_rows; ++row) {
        const std::array<int, 4>* table = nullptr;
        for (const auto& t : c.mine_row_scoring)
            if (t[0] <= totals[row] && (table == nullptr || t[0] > (*table)[0])) table = &t;
        for (int seat = 0; seat < n; ++seat) {
            int mine = by_seat[seat][row];
            if (mine <= 0) continue;
            int place = 0;
            for (int other = 0; other < n; ++other)
                if (by_seat[other][row] > 0 && by_seat[other][row] > mine) place += 1;
            if (place < 3) points[seat] += (*table)[1 + place];
        }
    }
}

void final_scoring(State& s) {
    std::vector<int> mines;
    mine_row_points(s, mines);
    s.final_scores.clear();
    for (size_t seat = 0; seat < s.players.size(); ++seat) {
        Player& p = s.players[seat];
        std::vector<Sq> owned;
        owned_squares(s, int(seat), owned);
        int city = 0;
        for (Sq sq : owned) city += matching_dots(s, sq);
        int inc = income(s, int(seat));
        int parts[6] = {p.points,
                        city,
                        mines[seat],
                        inc >= 0 ? inc / 10 : -((-inc + 9) / 10),
                        C(s).reputation_points[p.reputation + 5],
                        int(p.slots.size() + p.plots.size()) + p.pelicans};
        int final_points = parts[1] + parts[2] + parts[3] + parts[4] + parts[5];
        p.points += final_points;
        s.final_scores.push_back({parts[0], parts[1], parts[2], parts[3], parts[4], parts[5], p.points});
        ev(s, V_FINAL_SCORING, int(seat), final_points, p.points);
    }
    s.has_final = true;
}

// ---- rounds ------------------------------------------------------------------------------------------

int current_event(const State& s) {
    return s.round - 1 < int(s.events.size()) ? s.events[s.round - 1] : NONE;
}

int tax_due(const State& s, int seat) { return s.tax + PLOT_SURCHARGE[s.players[seat].plots.size()]; }

int reputation_penalty(const State& s) { return C(s).reputation_penalty[s.round - 1]; }

void begin_round_end(State& s) {
    s.phase = ROUND_END;
    int n = int(s.players.size());
    s.agenda.push_back(step(S_NEXT_ROUND, s.start_seat));
    s.agenda.push_back(step(S_PATRICIAN_SCORING, s.start_seat));
    for (int i = n - 1; i >= 0; --i) s.agenda.push_back(step(S_TAX, (s.start_seat + i) % n));
    s.agenda.push_back(step(S_EVENT_ADVANCES, s.start_seat));
}

void step_event_advances(State& s, const Step&) {
    int event = current_event(s);
    if (event == NONE) return;
    const auto& card = C(s).event_cards[event];
    advance_deck(s, POPULATION_DECK, card[2]);
    advance_deck(s, ORE_DECK, card[3]);
}

void step_tax(State& s, const Step& st) {
    int seat = st.seat;
    if (s.players[seat].groschen >= tax_due(s, seat)) {
        std::vector<Option> options;
        yes_no(options);
        pose(s, seat, D_TAX, std::move(options));
    } else {
        ev(s, V_TAX_UNPAID, seat, tax_due(s, seat));
        change_reputation(s, seat, -reputation_penalty(s));
    }
}

void resolve_tax(State& s, int seat, const Option& o) {
    if (o.type == O_CONFIRM && o.a) {
        pay(s, seat, tax_due(s, seat), 6);
    } else {
        ev(s, V_TAX_REFUSED, seat);
        change_reputation(s, seat, -reputation_penalty(s));
    }
}

void step_patrician_scoring(State& s, const Step&) {
    if (s.round > C(s).rounds - 3) score_patricians(s);
}

void reveal_event(State& s) {
    int event = current_event(s);
    if (event != NONE) {
        ev(s, V_EVENT_REVEALED, NONE, event);
        raise_tax(s, C(s).event_cards[event][1]);
    }
}

void red_arrival(State& s) {
    std::vector<int> tiles = s.red_stack;
    s.red_stack.clear();
    s.rng.shuffle(tiles);
    for (size_t row = 0; row < s.town_hall.size() && row < tiles.size(); ++row)
        s.town_hall[row].push_back(Stack{PUBLIC_LABEL + RED, {tiles[row]}});
    ev(s, V_RED_ARRIVAL, NONE);
}

void step_next_round(State& s, const Step&) {
    if (s.round >= C(s).rounds) {
        final_scoring(s);
        s.phase = OVER;
        ev(s, V_GAME_OVER, NONE);
        return;
    }
    if (s.round == C(s).red_arrival_round) red_arrival(s);
    int n = int(s.players.size());
    s.round += 1;
    s.start_seat = (s.start_seat + 1) % n;
    s.turn_index = 0;
    s.cards_left_in_turn = 2;
    for (Player& p : s.players) p.hand = C(s).card_numbers;
    s.phase = TURNS;
    ev(s, V_ROUND_STARTED, s.start_seat, s.round);
    reveal_event(s);
}

// ---- flow --------------------------------------------------------------------------------------------

int joker_cost(const State& s, int seat) { return s.players[seat].reputation >= 6 ? 0 : 1; }

bool action_feasible(const State& s, int seat, int action) {
    switch (action) {
        case MINE: return mine_feasible(s, seat, false);
        case RIGHTS: return rights_feasible(s, seat);
        case PLOT: return plot_feasible(s, seat);
        case BUILDING: return building_feasible(s, seat);
        case INCOME: return true;
        case ST_BARBARA: return s.players[seat].pelicans > 0;
        case JOKER: return true;  // the Joker can always take the Income action
    }
    return false;
}

void play_card_options(const State& s, int seat, std::vector<Option>& out) {
    const Components& c = C(s);
    const Player& p = s.players[seat];
    int8_t feasible[7] = {-1, -1, -1, -1, -1, -1, -1};
    std::vector<Option> no_effect;
    out.clear();
    for (size_t k = 0; k < c.action_cards.size(); ++k) {
        int number = c.card_numbers[k];
        if (std::find(p.hand.begin(), p.hand.end(), number) == p.hand.end()) continue;
        no_effect.push_back(opt(O_PLAY, number));
        int halves = c.action_cards[k][0] == c.action_cards[k][1] ? 1 : 2;
        for (int h = 0; h < halves; ++h) {
            int action = c.action_cards[k][h];
            if (feasible[action] < 0) feasible[action] = action_feasible(s, seat, action) ? 1 : 0;
            if (feasible[action]) out.push_back(opt(O_PLAY, number, action));
        }
    }
    std::stable_sort(no_effect.begin(), no_effect.end(), [](const Option& a, const Option& b) { return a.a < b.a; });
    out.insert(out.end(), no_effect.begin(), no_effect.end());
}

void joker_options(const State& s, int seat, std::vector<Option>& out) {
    out.clear();
    for (int action : ACTION_STEPS)
        if (action_feasible(s, seat, action)) out.push_back(opt(O_ACTION, action));
}

void push_action(State& s, int seat, int action) {
    switch (action) {
        case MINE: s.agenda.push_back(step(S_MINE, seat, 0)); break;
        case RIGHTS: s.agenda.push_back(step(S_RIGHTS, seat, 0)); break;
        case PLOT: s.agenda.push_back(step(S_PLOT, seat, 0)); break;
        case BUILDING: s.agenda.push_back(step(S_BUILDING, seat, 0)); break;
        case INCOME: s.agenda.push_back(step(S_INCOME, seat)); break;
        case ST_BARBARA: s.agenda.push_back(step(S_ST_BARBARA, seat)); break;
    }
}

void resolve_play_card(State& s, int seat, const Option& o) {
    Player& p = s.players[seat];
    p.hand.erase(std::find(p.hand.begin(), p.hand.end(), int(o.a)));
    s.cards_left_in_turn -= 1;
    ev(s, V_CARD_PLAYED, seat, o.a, o.b);
    if (o.b < 0) return;
    if (o.b == JOKER) {
        change_reputation(s, seat, -joker_cost(s, seat));
        std::vector<Option> options;
        joker_options(s, seat, options);
        pose(s, seat, D_JOKER_ACTION, std::move(options));
        return;
    }
    push_action(s, seat, o.b);
}

void reveal_and_start(State& s) {
    s.phase = TURNS;
    s.turn_index = 0;
    s.cards_left_in_turn = CARDS_PER_TURN[0];
    ev(s, V_ROUND_STARTED, s.start_seat, 1);
    reveal_event(s);
}

void resolve_guild_set(State& s, int seat, const Option& o) {
    const auto& set = C(s).guild_sets[s.guild_setup_card - 1][o.a];
    s.players[seat].guild_set.assign(set.begin(), set.end());
    ev(s, V_GUILD_SET, seat, set[0], set[1], set[2]);
    s.guild_sets_left.erase(std::find(s.guild_sets_left.begin(), s.guild_sets_left.end(), int(o.a)));
    if (s.guild_sets_left.empty()) s.phase = GUILD_ROWS;
}

void resolve_guild_rows(State& s, int seat, const Option& o) {
    s.players[seat].guilds = {o.a, o.b, o.c};
    ev(s, V_GUILD_ROWS, seat, o.a, o.b, o.c);
    for (const Player& p : s.players)
        if (p.guilds.empty()) return;
    reveal_and_start(s);
}

void pose_outside_actions(State& s) {
    int n = int(s.players.size());
    std::vector<Option> options;
    if (s.phase == GUILD_SETS) {
        int seat = int(s.guild_sets_left.size()) - 1;
        std::vector<int> left = s.guild_sets_left;
        std::sort(left.begin(), left.end());
        for (int i : left) options.push_back(opt(O_GUILD_SET, i));
        pose(s, seat, D_GUILD_SET, std::move(options));
    } else if (s.phase == GUILD_ROWS) {
        int seat = 0;
        while (!s.players[seat].guilds.empty()) ++seat;
        const auto& g = s.players[seat].guild_set;
        static const int PERMUTATIONS[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
        for (const auto& perm : PERMUTATIONS) options.push_back(opt(O_ROWS, g[perm[0]], g[perm[1]], g[perm[2]]));
        pose(s, seat, D_GUILD_ROWS, std::move(options));
    } else if (s.phase == TURNS) {
        if (s.cards_left_in_turn == 0) {
            s.turn_index += 1;
            if (s.turn_index >= 3 * n) {
                begin_round_end(s);
                return;
            }
            s.cards_left_in_turn = CARDS_PER_TURN[s.turn_index / n];
        }
        int seat = (s.start_seat + s.turn_index) % n;
        play_card_options(s, seat, options);
        pose(s, seat, D_PLAY_CARD, std::move(options));
    } else {
        throw std::logic_error("nothing to do in this phase");
    }
}

void run_step(State& s, const Step& st) {
    switch (st.kind) {
        case S_MINE: step_mine(s, st); break;
        case S_MINE_DRAW: step_mine_draw(s, st); break;
        case S_TECHNOLOGY: step_technology(s, st); break;
        case S_RIGHTS: step_rights(s, st); break;
        case S_PLOT: step_plot(s, st); break;
        case S_BUILDING: step_building(s, st); break;
        case S_BUILDING_EFFECT: step_building_effect(s, st); break;
        case S_HOUSE: step_house(s, st); break;
        case S_INCOME: step_income(s, st); break;
        case S_ST_BARBARA: step_st_barbara(s, st); break;
        case S_EVENT_ADVANCES: step_event_advances(s, st); break;
        case S_TAX: step_tax(s, st); break;
        case S_PATRICIAN_SCORING: step_patrician_scoring(s, st); break;
        case S_NEXT_ROUND: step_next_round(s, st); break;
    }
}

void run(State& s) {
    while (!s.has_pending && s.phase != OVER) {
        if (!s.agenda.empty()) {
            Step st = s.agenda.back();
            s.agenda.pop_back();
            run_step(s, st);
        } else {
            pose_outside_actions(s);
        }
    }
}

void resolve(State& s, int kind, int seat, const Option& o) {
    switch (kind) {
        case D_GUILD_SET: resolve_guild_set(s, seat, o); break;
        case D_GUILD_ROWS: resolve_guild_rows(s, seat, o); break;
        case D_PLAY_CARD: resolve_play_card(s, seat, o); break;
        case D_JOKER_ACTION:
            ev(s, V_JOKER, seat, o.a);
            push_action(s, seat, o.a);
            break;
        case D_REFILL_MINERS: resolve_refill(s, seat, o); break;
        case D_MINE_TILE: resolve_mine_tile(s, seat, o); break;
        case D_MINE_SQUARE: resolve_mine_square(s, seat, o); break;
        case D_TECH_SQUARE: resolve_tech_square(s, seat, o); break;
        case D_RIGHTS_TILE: resolve_rights(s, seat, o); break;
        case D_PLOT_SQUARE: resolve_plot(s, seat, o); break;
        case D_BUILD_TILE: resolve_build_tile(s, seat, o); break;
        case D_BUILD_SQUARE: resolve_build_square(s, seat, o); break;
        case D_REMOVE_HOUSE: resolve_remove_house(s, seat, o); break;
        case D_PUBLIC_REWARD: resolve_public_reward(s, seat, o); break;
        case D_SEAT_PATRICIAN: resolve_seat_patrician(s, seat, o); break;
        case D_TAX: resolve_tax(s, seat, o); break;
        case D_BARBARA_HOUSE: resolve_barbara_house(s, seat, o); break;
        case D_BARBARA_PATRICIAN: resolve_barbara_patrician(s, seat, o); break;
        case D_SCORE_BUILDING: resolve_score_building(s, seat, o); break;
    }
}

}  // namespace

// What the observation vector reads (encode.cpp), from the functions above.
int market_price(const State& s, int commodity) { return price(s, commodity); }
bool market_closed(const State& s, int commodity) { return no_market(s, commodity); }
int seat_income(const State& s, int seat) { return income(s, seat); }
int seat_tax_due(const State& s, int seat) { return tax_due(s, seat); }
int mine_draws(const State& s) { return draws_per_mine_action(s); }
int round_event(const State& s) { return current_event(s); }

void State::clear_grids() {
    for (int r = 0; r < GRID; ++r)
        for (int c = 0; c < GRID; ++c) {
            city_grid[r][c] = city_owner[r][c] = plot_grid[r][c] = -1;
            mine_grid[r][c] = rock_grid[r][c] = -1;
        }
}

void State::rebuild_grids() {
    clear_grids();
    for (const CityTile& t : city) {
        city_grid[t.sq.r][t.sq.c] = int8_t(t.building);
        city_owner[t.sq.r][t.sq.c] = int8_t(t.owner);
    }
    for (const PlotMark& p : plots) plot_grid[p.sq.r][p.sq.c] = int8_t(p.seat);
    for (const MineMark& m : mines) mine_grid[m.sq.r][m.sq.c] = int8_t(m.tile);
    for (const RockMark& r : rocks) rock_grid[r.sq.r][r.sq.c] = int8_t(r.tile);
}

void new_game(State& s, std::shared_ptr<const Components> comp, const std::vector<uint32_t>& seed_key,
              int guild_setup_card, int mine_setup_card, bool events) {
    s = State();
    s.comp = comp;
    const Components& c = *comp;
    int n = c.players;
    s.rng.seed(seed_key);
    for (int seat = 0; seat < n; ++seat) {
        Player p;
        p.groschen = c.starting_groschen[seat];
        p.miners_pool = c.starting_miners_in_pool;
        p.miners_reserve = c.miners_per_player - c.starting_miners_in_pool;
        p.hand = c.card_numbers;
        s.players.push_back(p);
    }
    for (int color = 0; color < 4; ++color) s.patrician_bank[color] = c.patricians_per_color;

    std::vector<int> bottoms;
    for (size_t id = 0; id < c.buildings.size(); ++id)
        if (c.buildings[id].guild >= 0 && c.buildings[id].bottom) bottoms.push_back(int(id));
    s.rng.shuffle(bottoms);
    s.town_hall.assign(c.town_hall_rows.size(), {});
    for (size_t index = 0; index < bottoms.size(); ++index) {
        int bottom = bottoms[index];
        int guild = c.buildings[bottom].guild;
        std::vector<int> others;
        for (size_t id = 0; id < c.buildings.size(); ++id)
            if (c.buildings[id].guild == guild && !c.buildings[id].bottom) others.push_back(int(id));
        s.rng.shuffle(others);
        Stack stack{guild, {bottom}};
        stack.tiles.insert(stack.tiles.end(), others.begin(), others.end());
        s.town_hall[index % s.town_hall.size()].push_back(stack);
    }
    for (size_t row = 0; row < c.town_hall_rows.size(); ++row) {
        int color = c.town_hall_rows[row];
        std::vector<int> pub;
        for (size_t id = 0; id < c.buildings.size(); ++id)
            if (c.buildings[id].color == color) pub.push_back(int(id));
        s.rng.shuffle(pub);
        s.town_hall[row].push_back(Stack{PUBLIC_LABEL + color, pub});
    }
    for (size_t id = 0; id < c.buildings.size(); ++id)
        if (c.buildings[id].color == RED) s.red_stack.push_back(int(id));

    s.mine_setup_card =
        mine_setup_card < 0 ? s.rng.randbelow(int(c.mine_setup_cards.size())) + 1 : mine_setup_card;
    std::vector<int> rocks = c.rock_ids;
    s.rng.shuffle(rocks);
    const auto& squares = c.mine_setup_cards[s.mine_setup_card - 1];
    for (size_t k = 0; k < squares.size() && k < rocks.size(); ++k) s.rocks.push_back(RockMark{squares[k], rocks[k]});
    for (int tier = 3; tier >= 1; --tier) {
        std::vector<int> tiles;
        for (int id = 0; id < c.mine_tile_count; ++id)
            if (c.tiles[id].tier == tier) tiles.push_back(id);
        s.rng.shuffle(tiles);
        s.mine_stack.insert(s.mine_stack.end(), tiles.begin(), tiles.end());
    }
    s.mine_discards_seen.assign(n, {});

    if (n == 2 || events) {
        std::vector<int> decks[2];
        for (size_t id = 0; id < c.event_cards.size(); ++id) decks[c.event_cards[id][0]].push_back(int(id));
        for (auto& deck : decks) s.rng.shuffle(deck);
        for (int round = 1; round <= c.rounds; ++round) {
            if (round == c.rounds) {
                s.events.push_back(NONE);
            } else {
                auto& deck = decks[round <= c.red_arrival_round ? 0 : 1];
                if (deck.empty()) {
                    s.events.push_back(NONE);
                } else {
                    s.events.push_back(deck.back());
                    deck.pop_back();
                }
            }
        }
    }
    s.guild_setup_card =
        guild_setup_card < 0 ? s.rng.randbelow(int(c.guild_sets.size())) + 1 : guild_setup_card;
    for (int seat = 0; seat < n; ++seat) s.guild_sets_left.push_back(seat);
    s.phase = GUILD_SETS;
    s.rebuild_grids();
    run(s);
}

void repose_mine_tile(State& s) {
    std::vector<Option> options;
    mine_tile_options(s, s.pending_seat, options);
    s.options = std::move(options);
}

void apply_option(State& s, const Option& given) {
    const Option option = given;  // the pending options are cleared below
    s.event_log.clear();
    if (!s.has_pending) throw std::invalid_argument("the game is over; no decision is accepted");
    if (std::find(s.options.begin(), s.options.end(), option) == s.options.end())
        throw std::invalid_argument("the option is not a legal answer to the pending decision");
    int kind = s.pending_kind, seat = s.pending_seat;
    s.has_pending = false;
    s.pending_seat = s.pending_kind = 0;  // as written out while nothing is pending
    s.options.clear();
    s.version += 1;
    resolve(s, kind, seat, option);
    run(s);
}

}  // namespace kh
