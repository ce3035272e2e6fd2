// The component values, read from the flat table the Python side writes (kutnahora.native.tables), and
// Python's random generator.
#include <algorithm>

#include "rules.hpp"

namespace kh {

namespace {

struct Reader {
    const std::vector<int>& v;
    size_t i = 0;
    int next() {
        if (i >= v.size()) throw std::invalid_argument("the component table ends too early");
        return v[i++];
    }
    Sq square() {
        int r = next(), c = next();
        if (r < 0 || c < 0 || r >= GRID || c >= GRID) throw std::invalid_argument("a square is off the grid");
        return Sq{int8_t(r), int8_t(c)};
    }
};

}  // namespace

Components::Components(const std::vector<int>& table) {
    Reader in{table};
    players = in.next();
    int n = in.next();
    for (int k = 0; k < n; ++k) {
        card_numbers.push_back(in.next());
        int top = in.next(), bottom = in.next();
        action_cards.push_back({top, bottom});
    }
    n = in.next();
    for (int k = 0; k < n; ++k) {
        BuildingData b;
        b.guild = in.next();
        b.color = in.next();
        for (bool& dot : b.dots) dot = in.next() != 0;
        b.wood_cost = in.next();
        b.plot_cost = in.next();
        b.production = in.next();
        b.bottom = in.next() != 0;
        int effects = in.next();
        for (int e = 0; e < effects; ++e) {
            Effect effect;
            effect.kind = in.next();
            effect.amount = in.next();
            effect.color = in.next();
            b.effects.push_back(effect);
        }
        buildings.push_back(b);
    }
    mine_tile_count = in.next();
    auto read_tile = [&]() {
        MineTileData t;
        t.tier = in.next();
        t.stars = in.next();
        t.ore = in.next();
        t.population = in.next();
        t.points = in.next();
        t.wood_cost = in.next();
        t.draws = in.next();
        return t;
    };
    for (int k = 0; k < mine_tile_count; ++k) tiles.push_back(read_tile());
    n = in.next();
    for (int k = 0; k < n; ++k) {
        int id = in.next();
        MineTileData t = read_tile();
        if (id < int(tiles.size())) throw std::invalid_argument("technology tiles must follow the mine tiles");
        tiles.resize(id + 1);
        tiles[id] = t;
        technology_ids.push_back(id);
    }
    n = in.next();
    for (int k = 0; k < n; ++k) {
        int id = in.next();
        rock_ids.push_back(id);
        if (id >= int(rock_stars.size())) rock_stars.resize(id + 1);
        rock_stars[id] = in.next();
    }
    n = in.next();
    for (int k = 0; k < n; ++k) {
        std::vector<Sq> squares(in.next());
        for (Sq& sq : squares) sq = in.square();
        mine_setup_cards.push_back(squares);
    }
    mine_rows = in.next();
    mine_columns = in.next();
    if (mine_rows > GRID || mine_columns > GRID) throw std::invalid_argument("the mine area is too large");
    entrance_cost = in.next();
    for (int r = 0; r < mine_rows; ++r) row_stars.push_back(in.next());
    n = in.next();
    for (int k = 0; k < n; ++k) entrances.push_back(in.square());
    n = in.next();
    for (int k = 0; k < n; ++k) {
        std::vector<std::array<int, 3>> sets(in.next());
        for (auto& set : sets)
            for (int& g : set) g = in.next();
        guild_sets.push_back(sets);
    }
    arm_notches = in.next();
    if (arm_notches > GRID) throw std::invalid_argument("too many arm notches");
    for (auto& deck : decks) {
        n = in.next();
        for (int k = 0; k < n; ++k) {
            PriceCardData card{};
            for (auto& prices : card.prices)
                for (int notch = 0; notch < arm_notches; ++notch) prices[notch] = in.next();
            int m = in.next();
            for (int j = 0; j < m; ++j) card.town_builds.push_back(in.next());
            m = in.next();
            for (int j = 0; j < m; ++j) card.red_x.push_back(in.next());
            deck.push_back(card);
        }
    }
    n = in.next();
    for (int k = 0; k < n; ++k) {
        std::array<int, 4> e;
        for (int& x : e) x = in.next();
        event_cards.push_back(e);
    }
    n = in.next();
    for (int k = 0; k < n; ++k) {
        int effect = in.next(), flip = in.next();
        barbara_tiles.push_back({effect, flip});
    }
    rounds = in.next();
    red_arrival_round = in.next();
    n = in.next();
    for (int k = 0; k < n; ++k) reputation_penalty.push_back(in.next());
    for (int& p : reputation_points) p = in.next();
    for (auto& row : house_rewards)
        for (auto& reward : row) {
            reward[0] = in.next();
            reward[1] = in.next();
        }
    board_rows = in.next();
    board_columns = in.next();
    if (board_rows > GRID || board_columns > GRID) throw std::invalid_argument("the city board is too large");
    for (int r = 0; r < GRID; ++r)
        for (int c = 0; c < GRID; ++c) {
            usable[r][c] = r < board_rows && c < board_columns;
            for (bool& dot : edge_dot[r][c]) dot = false;
        }
    n = in.next();
    for (int k = 0; k < n; ++k) {
        Sq sq = in.square();
        usable[sq.r][sq.c] = false;
    }
    n = in.next();
    for (int k = 0; k < n; ++k) {
        Sq sq = in.square();
        int side = in.next();
        edge_dot[sq.r][sq.c][side] = true;
    }
    static const int STEPS[4][2] = {{-1, 0}, {0, 1}, {1, 0}, {0, -1}};
    for (int r = 0; r < board_rows; ++r)
        for (int c = 0; c < board_columns; ++c) {
            if (!usable[r][c]) continue;
            board_squares.push_back(Sq{int8_t(r), int8_t(c)});
            for (const auto& step : STEPS) {
                int rr = r + step[0], cc = c + step[1];
                if (rr >= 0 && cc >= 0 && rr < GRID && cc < GRID && usable[rr][cc])
                    neighbours[r][c].push_back(Sq{int8_t(rr), int8_t(cc)});
            }
        }
    n = in.next();
    for (int k = 0; k < n; ++k) {
        int unit = in.next(), amount = in.next();
        town_hall_costs.push_back({unit, amount});
    }
    n = in.next();
    for (int k = 0; k < n; ++k) town_hall_rows.push_back(in.next());
    n = in.next();
    for (int k = 0; k < n; ++k) starting_groschen.push_back(in.next());
    patricians_per_color = in.next();
    n = in.next();
    for (int k = 0; k < n; ++k) {
        std::array<int, 4> s;
        for (int& x : s) x = in.next();
        mine_row_scoring.push_back(s);
    }
    default_plot_cost = in.next();
    starting_miners_in_pool = in.next();
    miners_per_player = in.next();
    houses_per_row = in.next();
    plot_markers = in.next();
    building_slots = in.next();
    miner_pool_size = in.next();
    patrician_seat_cost = in.next();
    tax_limit = in.next();
    if (in.i != table.size()) throw std::invalid_argument("the component table is longer than expected");
}

// CPython's Modules/_randommodule.c: init_genrand, init_by_array and genrand_uint32.
void PyRandom::seed(const std::vector<uint32_t>& key) {
    mt[0] = 19650218U;
    for (int i = 1; i < 624; ++i) mt[i] = 1812433253U * (mt[i - 1] ^ (mt[i - 1] >> 30)) + uint32_t(i);
    int i = 1, j = 0;
    size_t length = key.size();
    for (size_t k = std::max<size_t>(624, length); k; --k) {
        mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1664525U)) + key[j] + uint32_t(j);
        ++i;
        ++j;
        if (i >= 624) {
            mt[0] = mt[623];
            i = 1;
        }
        if (size_t(j) >= length) j = 0;
    }
    for (int k = 623; k; --k) {
        mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1566083941U)) - uint32_t(i);
        ++i;
        if (i >= 624) {
            mt[0] = mt[623];
            i = 1;
        }
    }
    mt[0] = 0x80000000U;
    index = 624;
}

uint32_t PyRandom::next32() {
    static const uint32_t mag01[2] = {0x0U, 0x9908b0dfU};
    uint32_t y;
    if (index >= 624) {
        int kk;
        for (kk = 0; kk < 624 - 397; ++kk) {
            y = (mt[kk] & 0x80000000U) | (mt[kk + 1] & 0x7fffffffU);
            mt[kk] = mt[kk + 397] ^ (y >> 1) ^ mag01[y & 0x1U];
        }
        for (; kk < 623; ++kk) {
            y = (mt[kk] & 0x80000000U) | (mt[kk + 1] & 0x7fffffffU);
            mt[kk] = mt[kk + (397 - 624)] ^ (y >> 1) ^ mag01[y & 0x1U];
        }
        y = (mt[623] & 0x80000000U) | (mt[0] & 0x7fffffffU);
        mt[623] = mt[396] ^ (y >> 1) ^ mag01[y & 0x1U];
        index = 0;
    }
    y = mt[index++];
    y ^= (y >> 11);
    y ^= (y << 7) & 0x9d2c5680U;
    y ^= (y << 15) & 0xefc60000U;
    y ^= (y >> 18);
    return y;
}

int PyRandom::randbelow(int n) {
    int k = 0;
    while ((n >> k) != 0) ++k;  // n.bit_length()
    uint32_t r = getrandbits(k);
    while (r >= uint32_t(n)) r = getrandbits(k);
    return int(r);
}

}  // namespace kh
