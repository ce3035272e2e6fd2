// The rules of Kutna Hora in C++: the same game as the Python engine (kutnahora.engine), which stays the
// reference. Every function here mirrors the Python function of the same name; the order of every list,
// every draw of the random generator and every option is the same, so that a state can be written out
// and compared with the engine's (tests/native/test_differential.py).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

namespace kh {

// Enumerations in the order of their Python definitions (kutnahora.engine.components, options, state).
enum Guild { METALLURGISTS, MINERS, BUILDERS, SCRIBES, GROCERS, INNKEEPERS };
enum Commodity { SILVER, ORE, WOOD, PERMITS, FOOD, BEER };
enum DeckId { POPULATION_DECK, ORE_DECK };
enum Color { GREEN, SILVER_COLOR, YELLOW, RED };
enum Action { RIGHTS, INCOME, PLOT, MINE, BUILDING, JOKER, ST_BARBARA };
enum EffectKind {
    E_ARM, E_MINING_TECHNOLOGY, E_ORE_DECK, E_POPULATION_DECK, E_POINTS, E_REPUTATION, E_PELICANS,
    E_TAX, E_PATRICIAN, E_REMOVE_HOUSE, E_FLIP_ST_BARBARA
};
enum HouseRewardKind { R_PUBLIC_BUILDING, R_PELICAN, R_REPUTATION, R_POINTS };
enum BarbaraEffect {
    B_REPUTATION, B_FREE_RIGHTS, B_HOUSE_FOR_PRODUCTION, B_FREE_PLOT, B_DOUBLE_INCOME, B_SEAT_FROM_BANK,
    B_PUBLIC_NEIGHBOURS, B_FREE_BUILDING, B_DOUBLE_MINE, B_SCORE_BUILDING, B_FINAL
};
enum DecisionKind {
    D_GUILD_SET, D_GUILD_ROWS, D_PLAY_CARD, D_JOKER_ACTION, D_REFILL_MINERS, D_MINE_TILE, D_MINE_SQUARE,
    D_TECH_SQUARE, D_RIGHTS_TILE, D_PLOT_SQUARE, D_BUILD_TILE, D_BUILD_SQUARE, D_REMOVE_HOUSE,
    D_PUBLIC_REWARD, D_SEAT_PATRICIAN, D_TAX, D_BARBARA_HOUSE, D_BARBARA_PATRICIAN, D_SCORE_BUILDING
};
enum StepKind {
    S_MINE, S_MINE_DRAW, S_TECHNOLOGY, S_RIGHTS, S_PLOT, S_BUILDING, S_BUILDING_EFFECT, S_HOUSE, S_INCOME,
    S_ST_BARBARA, S_EVENT_ADVANCES, S_TAX, S_PATRICIAN_SCORING, S_NEXT_ROUND
};
enum Phase { GUILD_SETS, GUILD_ROWS, TURNS, ROUND_END, OVER };
// Option types, in the order of kutnahora.engine.options' Option union.
enum OptionType { O_PLAY, O_ACTION, O_GUILD_SET, O_ROWS, O_TILE, O_SQUARE, O_GUILD, O_PATRICIAN, O_CONFIRM, O_SKIP };

constexpr int GRID = 8;  // city and mine grids are at most this many rows and columns
constexpr int NONE = -1;

struct Option {
    int8_t type, a, b, c;  // play: card, action (-1: none); rows: three guilds; square: row, col; confirm: 1/0
    bool operator==(const Option& o) const { return type == o.type && a == o.a && b == o.b && c == o.c; }
    int32_t key() const {  // one int per option, what the Python side maps back to an option value
        return (int32_t(type) << 24) | (int32_t(uint8_t(a + 1)) << 16) | (int32_t(uint8_t(b + 1)) << 8) |
               int32_t(uint8_t(c + 1));
    }
};

struct Effect { int kind, amount, color; };
struct BuildingData {
    int guild, color;  // -1 when not a guild / public building
    bool dots[4];      // north, east, south, west
    int wood_cost, plot_cost, production;
    bool bottom;
    std::vector<Effect> effects;
};
struct MineTileData { int tier, stars, ore, population, points, wood_cost, draws; };
struct PriceCardData {
    int prices[6][GRID];  // commodity -> price per notch (zeros for the other stand's commodities)
    std::vector<int> town_builds, red_x;
};
struct Sq { int8_t r, c; };
inline bool operator<(Sq a, Sq b) { return a.r != b.r ? a.r < b.r : a.c < b.c; }
inline bool operator==(Sq a, Sq b) { return a.r == b.r && a.c == b.c; }

// The component values of one game size (the board side, rounds track and guild sets depend on it),
// given by the Python engine's component set as a flat list of ints (kutnahora.native.tables).
struct Components {
    int players;
    std::vector<std::array<int, 2>> action_cards;  // top, bottom; numbers in card_numbers
    std::vector<int> card_numbers;
    std::vector<BuildingData> buildings;
    std::vector<MineTileData> tiles;  // mine tiles then technology tiles, by id
    int mine_tile_count;
    std::vector<int> technology_ids;
    std::vector<int> rock_ids, rock_stars;  // rock_stars by rock id
    std::vector<std::vector<Sq>> mine_setup_cards;
    int mine_rows, mine_columns, entrance_cost;
    std::vector<int> row_stars;
    std::vector<Sq> entrances;
    std::vector<std::vector<std::array<int, 3>>> guild_sets;  // per setup card, for this player count
    std::vector<PriceCardData> decks[2];
    int arm_notches;
    std::vector<std::array<int, 4>> event_cards;  // deck (0 A, 1 B), tax, population, ore
    std::vector<std::array<int, 2>> barbara_tiles;  // effect, flip tax
    int rounds, red_arrival_round;
    std::vector<int> reputation_penalty;
    int reputation_points[15];  // reputation -5..9
    int house_rewards[3][4][2];  // kind, amount
    int board_rows, board_columns;
    bool usable[GRID][GRID];
    bool edge_dot[GRID][GRID][4];
    std::vector<Sq> board_squares;  // row-major
    std::vector<Sq> neighbours[GRID][GRID];  // usable neighbours, north, east, south, west
    std::vector<std::array<int, 2>> town_hall_costs;  // unit (0 groschen, 1 permits), amount
    std::vector<int> town_hall_rows;  // colour of each row
    std::vector<int> starting_groschen;
    int patricians_per_color;
    std::vector<std::array<int, 4>> mine_row_scoring;  // min stars, points x3
    int default_plot_cost, starting_miners_in_pool, miners_per_player, houses_per_row, plot_markers;
    int building_slots, miner_pool_size, patrician_seat_cost, tax_limit;

    explicit Components(const std::vector<int>& table);
};

// Python's random.Random (the Mersenne Twister of CPython's _random module) and the calls the rules make.
struct PyRandom {
    uint32_t mt[624];
    int index = 625;
    void seed(const std::vector<uint32_t>& key);
    uint32_t next32();
    uint32_t getrandbits(int k) { return k == 0 ? 0 : next32() >> (32 - k); }
    int randbelow(int n);
    template <class T> void shuffle(std::vector<T>& x) {
        for (int i = int(x.size()) - 1; i > 0; --i) {
            int j = randbelow(i + 1);
            std::swap(x[i], x[j]);
        }
    }
};

// What happened, as the engine's events (kutnahora.engine.events): a kind of the core's (EventKind) with
// small int arguments, written out as the engine's sentences by kutnahora.native.events. Recorded only
// when asked (State::record_events), so that rollouts pay nothing for them.
enum EventKind {
    V_CARD_PLAYED, V_JOKER, V_GUILD_SET, V_GUILD_ROWS, V_ROUND_STARTED, V_DECK_ADVANCED, V_ARM_MOVED,
    V_TOWN_BUILT, V_TOWN_BUILT_GONE, V_REPUTATION, V_POINTS, V_PAID, V_TAX, V_PRODUCTION, V_MINERS,
    V_NO_EFFECT, V_MINE_RESHUFFLED, V_MINE_DRAWN, V_MINE_DISCARDED, V_MINE_PLACED, V_TECHNOLOGY, V_RIGHTS,
    V_PLOT, V_BUILT, V_PELICANS, V_PATRICIAN, V_BARBARA_FLIPPED, V_HOUSE_REMOVED, V_HOUSE, V_INCOME,
    V_COUNCIL, V_ST_BARBARA, V_TAX_UNPAID, V_TAX_REFUSED, V_GAME_OVER, V_RED_ARRIVAL, V_EVENT_REVEALED,
    V_PATRICIAN_SCORING, V_FINAL_SCORING
};
struct EventRecord { int kind, seat, a, b, c, d; };

struct Step {
    int8_t kind, seat, nargs;
    int16_t args[2];
};

struct Player {
    int groschen = 0;
    std::vector<int> guild_set, guilds;
    int reputation = 0, points = 0;
    int production[6] = {0, 0, 0, 0, 0, 0};
    int mine_ore = 0;
    int houses_removed[3] = {0, 0, 0};
    std::vector<Sq> plots;
    std::vector<int> slots;
    int pelicans = 0, pelicans_used = 0, miners_pool = 0, miners_reserve = 0;
    std::vector<int> hand, buildings;
    std::vector<Sq> mines;
};

struct Stack {
    int label;  // guild 0..5, or 6 + colour
    std::vector<int> tiles;
};

struct CityTile { Sq sq; int building, owner; };
struct PlotMark { Sq sq; int seat; };
struct MineMark { Sq sq; int tile, owner; };
struct RockMark { Sq sq; int tile; };

struct State {
    std::shared_ptr<const Components> comp;
    PyRandom rng;
    std::vector<Player> players;
    int phase = GUILD_SETS, round = 1, start_seat = 0, turn_index = 0, cards_left_in_turn = 0, version = 0;
    bool has_pending = false;
    int pending_seat = 0, pending_kind = 0;
    std::vector<Option> options;
    std::vector<Step> agenda;
    int guild_setup_card = 0, mine_setup_card = 0;
    std::vector<int> guild_sets_left;
    int deck_position[2] = {0, 0};
    int arms[5] = {0, 0, 0, 0, 0};
    int tax = 0;
    std::vector<std::vector<Stack>> town_hall;
    std::vector<int> red_stack, town_discards;
    std::vector<CityTile> city;  // in the order built (the Python dict's order)
    std::vector<PlotMark> plots;
    std::vector<MineMark> mines;
    std::vector<RockMark> rocks;
    std::vector<int> mine_stack, mine_discard;
    std::vector<std::vector<int>> mine_discards_seen;
    int mine_reshuffles = 0;
    std::vector<int> drawn;
    int kept_tile = NONE;
    bool free_action = false;
    int technology_taken = 0, barbara_next = 1;
    int patrician_bank[4] = {0, 0, 0, 0}, patrician_pool[4] = {0, 0, 0, 0}, council[4] = {0, 0, 0, 0};
    std::vector<int> events;  // -1 for none
    int building_in_hand = NONE;
    bool has_final = false;
    std::vector<std::array<int, 7>> final_scores;
    // grids mirroring city, plots, mines and rocks for quick lookups: -1 empty
    int8_t city_grid[GRID][GRID], city_owner[GRID][GRID], plot_grid[GRID][GRID];
    int8_t mine_grid[GRID][GRID], rock_grid[GRID][GRID];
    // not part of the game: the events of the last apply, when recorded
    bool record_events = false;
    std::vector<EventRecord> event_log;

    State() { clear_grids(); }
    void clear_grids();
    void rebuild_grids();
};

// The API: new game, legal options, apply, write out and read in.
void new_game(State& s, std::shared_ptr<const Components> comp, const std::vector<uint32_t>& seed_key,
              int guild_setup_card, int mine_setup_card, bool events);
void apply_option(State& s, const Option& option);  // the option must be listed (checked)
void dump(const State& s, std::vector<int>& out);
// Resampling (resample.cpp): draw a state's hidden parts as kutnahora.engine.resample draws them, from a
// plan of what is hidden (kutnahora.native.resampling) and the search's generator.
void resample_hidden(State& s, const std::vector<int>& plan, PyRandom& rng);
void repose_mine_tile(State& s);  // the pending MINE_TILE decision's options, from the drawn tiles
void load(State& s, std::shared_ptr<const Components> comp, const std::vector<int>& in);

// What a seat's observation vector reads (encode.cpp): the rules' own functions of the same meaning.
int market_price(const State& s, int commodity);
bool market_closed(const State& s, int commodity);
int seat_income(const State& s, int seat);
int seat_tax_due(const State& s, int seat);
int mine_draws(const State& s);
int round_event(const State& s);  // the current round's event card, or NONE

// A seat's observation vector (kutnahora.learned.encoding.ObservationLayout), written from the state as
// kutnahora.learned.state_encoding.StateEncoder writes it: the layout's offsets come from Python.
struct Encoding {
    explicit Encoding(const std::vector<int>& table, const std::vector<float>& scale, const std::vector<float>& low);
    int size;
    int players, phase, counters, start_seat, decks, arms, prices, no_market, town_hall, hall_cols, stack;
    int town_discards, building_in_hand, city, city_cols, square, mines, mine_cols, mine_square;
    int bank, pool, council, revealed, current_event, guild_card, mine_card, sets_left, kind, owes;
    int drawn, kept, discarded, seat0, seat_size, mine_tiles, buildings, tiles, guild_set_at, guilds_at;
    int production_at, hand_at, slots_at;
    std::vector<int> event_index;  // by event id
    std::vector<float> scale, low;  // the normalised form: each entry times scale, then clipped to [low, 1]
};
// Write viewer's vector (viewer -1: a spectator, relative to seat 0) into out (encoding.size floats).
void encode(const State& s, const Encoding& e, int viewer, bool uses_events, bool normalized, float* out);

}  // namespace kh
