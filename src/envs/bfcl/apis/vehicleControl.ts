import {
  add,
  getItem,
  gt,
  iterate,
  le,
  lt,
  mod,
  mul,
  setItem,
  sub,
  toFloat,
  truediv,
  truthy,
} from '../../py/ops.js';
import { PyRandom, randomFromScenarioSeed } from '../../py/random.js';
import { joinStrings } from '../../py/text.js';
import { deepCopy, dictOf, type PyDict, type PyValue, pyEquals } from '../../py/values.js';
import { type ApiClass, type BfclApi, longContextConstant, opt, req, type ScenarioContext } from './api.js';

const DEFAULT_RANDOM_SEED = 141053n;
const MAX_FUEL_LEVEL = 50n;
const MIN_FUEL_LEVEL = 0.0;
const MILE_PER_GALLON = 20.0;

/** The public attributes in `vars()` order, the scenario key each is read from, and its default. */
const PUBLIC_FIELDS = [
  ['fuelLevel', 'fuelLevel', () => 0.0],
  ['batteryVoltage', 'batteryVoltage', () => 12.6],
  ['engine_state', 'engineState', () => 'stopped'],
  ['remainingUnlockedDoors', 'remainingUnlockedDoors', () => 4n],
  [
    'doorStatus',
    'doorStatus',
    () =>
      dictOf({ driver: 'unlocked', passenger: 'unlocked', rear_left: 'unlocked', rear_right: 'unlocked' }),
  ],
  ['acTemperature', 'acTemperature', () => 25.0],
  ['fanSpeed', 'fanSpeed', () => 50n],
  ['acMode', 'acMode', () => 'auto'],
  ['humidityLevel', 'humidityLevel', () => 50.0],
  ['headLightStatus', 'headLightStatus', () => 'off'],
  ['parkingBrakeStatus', 'parkingBrakeStatus', () => 'released'],
  ['brakePedalStatus', 'brakePedalStatus', () => 'released'],
  ['distanceToNextVehicle', 'distanceToNextVehicle', () => 50.0],
  ['cruiseStatus', 'cruiseStatus', () => 'inactive'],
  ['destination', 'destination', () => 'None'],
  ['frontLeftTirePressure', 'frontLeftTirePressure', () => 32.0],
  ['frontRightTirePressure', 'frontRightTirePressure', () => 32.0],
  ['rearLeftTirePressure', 'rearLeftTirePressure', () => 30.0],
  ['rearRightTirePressure', 'rearRightTirePressure', () => 30.0],
] as const satisfies readonly (readonly [string, string, () => PyValue])[];

type PublicField = (typeof PUBLIC_FIELDS)[number][0];

/** Symmetric zip-code pairs of `estimate_distance` (in the reference's test order). */
const DISTANCES: readonly (readonly [string, string, number])[] = [
  ['83214', '74532', 750.0],
  ['56108', '62947', 320.0],
  ['71354', '83462', 450.0],
  ['47329', '52013', 290.0],
  ['69238', '51479', 630.0],
  ['94016', '83214', 980.0],
  ['94016', '94704', 600.0],
  ['94704', '08540', 2550.0],
  ['94016', '08540', 1950.0],
  ['62947', '47329', 1053.0],
  ['94016', '62947', 780.0],
  ['74532', '94016', 880.0],
];

const ZIPCODES: ReadonlyMap<string, string> = new Map([
  ['Rivermist', '83214'],
  ['Stonebrook', '74532'],
  ['Maplecrest', '56108'],
  ['Silverpine', '62947'],
  ['Shadowridge', '71354'],
  ['Sunset Valley', '83462'],
  ['Oakendale', '47329'],
  ['Willowbend', '52013'],
  ['Crescent Hollow', '69238'],
  ['Autumnville', '51479'],
  ['San Francisco', '94016'],
]);

/** The long-context texts and tables (SPEC 8.8), fetched once at scenario load. */
interface LongContextData {
  readonly carMetadata: PyValue;
  readonly intermediaryCities: PyValue;
  readonly parkingBrakeInstruction: PyValue;
  /**
   * The reference writes the temperature into its module-level weather dict and returns that
   * dict; each instance gets its own copy so nothing leaks between tasks (the key lands at the
   * end the first time and keeps its place afterwards, as in a fresh reference process).
   */
  readonly weather: PyDict;
}

/** Python's chained `lo <= x <= hi` (the second comparison only runs when the first holds). */
function between(lo: PyValue, x: PyValue, hi: PyValue): boolean {
  return le(lo, x) && le(x, hi);
}

/** `scenario.get(key, default)` */
function scenarioValue(config: PyDict, key: string, fallback: PyValue): PyValue {
  const v = config.get(key);
  return v === undefined ? fallback : v;
}

export class VehicleControl implements BfclApi {
  readonly className = 'VehicleControlAPI' as const;

  readonly state = new Map<PublicField, PyValue>();
  long_context = false;
  /** Private in the reference (`_parkingBrakeForce`, `_slopeAngle`, `_brakePedalForce`). */
  private parkingBrakeForce: PyValue = 0.0;
  private slopeAngle: PyValue = 0.0;
  private brakePedalForce: PyValue = 0.0;
  private random = new PyRandom(DEFAULT_RANDOM_SEED);
  private longContextData: LongContextData | undefined;

  constructor() {
    for (const [field, , makeDefault] of PUBLIC_FIELDS) this.state.set(field, makeDefault());
  }

  get(field: PublicField): PyValue {
    return this.state.get(field)!;
  }

  set(field: PublicField, value: PyValue): void {
    this.state.set(field, value);
  }

  loadScenario(config: PyDict, ctx: ScenarioContext): void {
    this.random = randomFromScenarioSeed(
      scenarioValue(config, 'random_seed', DEFAULT_RANDOM_SEED),
      'VehicleControlAPI',
    );
    for (const [field, key, makeDefault] of PUBLIC_FIELDS) {
      const v = config.get(key);
      this.set(field, v === undefined ? makeDefault() : v);
    }
    // The scenario's remainingUnlockedDoors is always replaced by a count of the locked doors.
    const doors = this.get('doorStatus');
    let locked = 0n;
    for (const door of iterate(doors)) if (pyEquals(getItem(doors, door), 'locked')) locked++;
    this.set('remainingUnlockedDoors', 4n - locked);
    this.parkingBrakeForce = scenarioValue(config, 'parkingBrakeForce', 0.0);
    this.slopeAngle = scenarioValue(config, 'slopeAngle', 0.0);
    this.brakePedalForce = scenarioValue(config, 'brakePedalForce', 0.0);
    this.long_context = ctx.longContext;
    this.longContextData = undefined;
    if (this.long_context) {
      const weather = deepCopy(longContextConstant(ctx, 'LONG_WEATHER_EXTENSION'));
      if (!(weather instanceof Map)) throw new Error('LONG_WEATHER_EXTENSION is not a dict');
      this.longContextData = {
        carMetadata: longContextConstant(ctx, 'CAR_STATUS_METADATA_EXTENSION'),
        intermediaryCities: deepCopy(longContextConstant(ctx, 'INTERMEDIARY_CITIES')),
        parkingBrakeInstruction: longContextConstant(ctx, 'PARKING_BRAKE_INSTRUCTION'),
        weather,
      };
    }
  }

  publicState(): ReadonlyMap<string, PyValue> {
    const out = new Map<string, PyValue>(this.state);
    out.set('long_context', this.long_context);
    return out;
  }

  startEngine(ignitionMode: PyValue): PyDict {
    if (pyEquals(ignitionMode, 'STOP')) this.set('engine_state', 'stopped');
    if (gt(this.get('remainingUnlockedDoors'), 0n)) {
      const doors = this.get('doorStatus');
      const unlocked = iterate(doors).filter((door) => pyEquals(getItem(doors, door), 'unlocked'));
      return dictOf({
        error:
          'All doors must be locked before starting the engine. Here are the unlocked doors: ' +
          joinStrings(', ', unlocked),
      });
    }
    if (!pyEquals(this.get('brakePedalStatus'), 'pressed')) {
      return dictOf({ error: 'Brake pedal needs to be pressed when starting the engine.' });
    }
    if (!pyEquals(this.brakePedalForce, 1000.0)) {
      return dictOf({ error: 'Must press the brake fully before starting the engine.' });
    }
    if (lt(this.get('fuelLevel'), MIN_FUEL_LEVEL)) return dictOf({ error: 'Fuel tank is empty.' });
    // Quirk: "STOP" has already stopped the engine above, and still ends as an invalid mode.
    if (!pyEquals(ignitionMode, 'START')) return dictOf({ error: 'Invalid ignition mode.' });
    this.set('engine_state', 'running');
    return dictOf({
      engineState: this.get('engine_state'),
      fuelLevel: this.get('fuelLevel'),
      batteryVoltage: this.get('batteryVoltage'),
    });
  }

  fillFuelTank(amount: PyValue): PyDict {
    if (lt(amount, 0n)) return dictOf({ error: 'Fuel amount cannot be negative.' });
    if (gt(add(this.get('fuelLevel'), amount), MAX_FUEL_LEVEL)) {
      return dictOf({ error: 'Cannot fill gas above the tank capacity.' });
    }
    if (lt(add(this.get('fuelLevel'), amount), MIN_FUEL_LEVEL)) {
      return dictOf({ error: 'Fuel tank is empty. Min fuel level is 0 gallons.' });
    }
    this.set('fuelLevel', add(this.get('fuelLevel'), amount));
    return dictOf({ fuelLevel: this.get('fuelLevel') });
  }

  lockDoors(unlock: PyValue, door: PyValue): PyDict {
    const target = truthy(unlock) ? 'unlocked' : 'locked';
    const doors = this.get('doorStatus');
    // Doors before an unknown one (KeyError) have already changed, as in the reference.
    for (const d of iterate(door)) {
      if (pyEquals(getItem(doors, d), target)) continue;
      setItem(doors, d, target);
      const count = this.get('remainingUnlockedDoors');
      this.set('remainingUnlockedDoors', target === 'unlocked' ? add(count, 1n) : sub(count, 1n));
    }
    return dictOf({ lockStatus: target, remainingUnlockedDoors: this.get('remainingUnlockedDoors') });
  }

  adjustClimateControl(temperature: PyValue, unit: PyValue, fanSpeed: PyValue, mode: PyValue): PyDict {
    if (!between(0n, fanSpeed, 100n)) return dictOf({ error: 'Fan speed must be between 0 and 100.' });
    // Stored before the conversion, which may raise on a non-number.
    this.set('acTemperature', temperature);
    if (pyEquals(unit, 'fahrenheit')) {
      this.set('acTemperature', truediv(mul(sub(temperature, 32n), 5n), 9n));
    }
    // The defaults overwrite fan speed and mode too.
    this.set('fanSpeed', fanSpeed);
    this.set('acMode', mode);
    // Echoes the input temperature, not the stored (converted) one.
    return dictOf({
      currentACTemperature: temperature,
      climateMode: mode,
      humidityLevel: this.get('humidityLevel'),
    });
  }

  get_current_speed(): PyDict {
    return dictOf({ currentSpeed: this.random.uniform(0.0, 120.0) });
  }

  get_outside_temperature_from_google(): PyDict {
    const temperature = this.random.uniform(-10.0, 40.0);
    if (this.longContextData) {
      this.longContextData.weather.set('outsideTemperature', temperature);
      return this.longContextData.weather;
    }
    return dictOf({ outsideTemperature: temperature });
  }

  setHeadlights(mode: PyValue): PyDict {
    if (!['on', 'off', 'auto'].some((m) => pyEquals(m, mode)))
      return dictOf({ error: 'Invalid headlight mode.' });
    // "auto" is stored and reported as "off".
    const status = pyEquals(mode, 'on') ? 'on' : 'off';
    this.set('headLightStatus', status);
    return dictOf({ headlightStatus: status });
  }

  displayCarStatus(option: PyValue): PyDict {
    const status: PyDict = new Map();
    if (this.longContextData) status.set('metadata', this.longContextData.carMetadata);
    const show = (entries: Record<string, PyValue>) => {
      for (const [k, v] of Object.entries(entries)) status.set(k, v);
    };
    const opt = typeof option === 'string' ? option : undefined;
    switch (opt) {
      case 'fuel':
        show({ fuelLevel: this.get('fuelLevel') });
        break;
      case 'battery':
        show({ batteryVoltage: this.get('batteryVoltage') });
        break;
      case 'doors':
        show({ doorStatus: this.get('doorStatus') });
        break;
      case 'climate':
        show({
          currentACTemperature: this.get('acTemperature'),
          fanSpeed: this.get('fanSpeed'),
          climateMode: this.get('acMode'),
          humidityLevel: this.get('humidityLevel'),
        });
        break;
      case 'headlights':
        show({ headlightStatus: this.get('headLightStatus') });
        break;
      case 'parkingBrake':
        show({
          parkingBrakeStatus: this.get('parkingBrakeStatus'),
          parkingBrakeForce: this.parkingBrakeForce,
          slopeAngle: this.slopeAngle,
        });
        break;
      case 'brakePedal':
        show({ brakePedalStatus: this.get('brakePedalStatus'), brakePedalForce: this.brakePedalForce });
        break;
      case 'engine':
        show({ engineState: this.get('engine_state') });
        break;
      default:
        show({ error: 'Invalid option' });
    }
    return status;
  }

  activateParkingBrake(mode: PyValue): PyDict {
    if (!pyEquals(mode, 'engage') && !pyEquals(mode, 'release')) return dictOf({ error: 'Invalid mode' });
    const engage = pyEquals(mode, 'engage');
    const status = engage ? 'engaged' : 'released';
    const force = engage ? 500.0 : 0.0;
    this.set('parkingBrakeStatus', status);
    this.parkingBrakeForce = force;
    // Quirk: releasing also sets the slope angle to 10.
    this.slopeAngle = 10.0;
    const result: PyDict = new Map();
    if (this.longContextData)
      result.set('parkingBrakeInstruction', this.longContextData.parkingBrakeInstruction);
    // The response exposes the private attribute names.
    result.set('parkingBrakeStatus', status);
    result.set('_parkingBrakeForce', force);
    result.set('_slopeAngle', 10.0);
    return result;
  }

  pressBrakePedal(position: PyValue): PyDict {
    if (!between(0n, position, 1n)) return dictOf({ error: 'Pedal position must be between 0 and 1.' });
    if (pyEquals(position, 0n)) return this.releaseBrakePedal();
    // Stored as computed (an int for an int position), reported as a float.
    const force = mul(position, 1000n);
    this.set('brakePedalStatus', 'pressed');
    this.brakePedalForce = force;
    return dictOf({ brakePedalStatus: 'pressed', brakePedalForce: toFloat(force) });
  }

  releaseBrakePedal(): PyDict {
    this.set('brakePedalStatus', 'released');
    this.brakePedalForce = 0.0;
    return dictOf({ brakePedalStatus: 'released', brakePedalForce: 0.0 });
  }

  setCruiseControl(speedArg: PyValue, activate: PyValue, distanceArg: PyValue): PyDict {
    // Converted in this order, before any check.
    const distance = toFloat(distanceArg);
    const speed = toFloat(speedArg);
    if (pyEquals(this.get('engine_state'), 'stopped')) {
      return dictOf({ error: 'Start the engine before activating the cruise control.' });
    }
    if (truthy(activate)) {
      // Quirk: the distance is stored before the speed is validated.
      this.set('distanceToNextVehicle', distance);
      if (lt(speed, 0n) || gt(speed, 120n) || !pyEquals(mod(speed, 5n), 0n))
        return dictOf({ error: 'Invalid speed' });
      this.set('cruiseStatus', 'active');
    } else {
      this.set('cruiseStatus', 'inactive');
      this.set('distanceToNextVehicle', distance);
    }
    return dictOf({
      cruiseStatus: this.get('cruiseStatus'),
      currentSpeed: speed,
      distanceToNextVehicle: distance,
    });
  }

  estimate_distance(cityA: PyValue, cityB: PyValue): PyDict {
    const pair = DISTANCES.find(([a, b]) => (cityA === a && cityB === b) || (cityA === b && cityB === a));
    const result = pair
      ? dictOf({ distance: pair[2] })
      : dictOf({ error: 'distance not found in database.' });
    // Added to errors too.
    if (this.longContextData) result.set('intermediaryCities', this.longContextData.intermediaryCities);
    return result;
  }

  check_tire_pressure(): PyDict {
    const fl = this.get('frontLeftTirePressure');
    const fr = this.get('frontRightTirePressure');
    const rl = this.get('rearLeftTirePressure');
    const rr = this.get('rearRightTirePressure');
    const average = truediv(add(add(add(fl, fr), rl), rr), 4n);
    return dictOf({
      frontLeftTirePressure: fl,
      frontRightTirePressure: fr,
      rearLeftTirePressure: rl,
      rearRightTirePressure: rr,
      healthy_tire_pressure: between(30n, average, 35n),
      car_info: this.longContextData ? this.longContextData.carMetadata : new Map(),
    });
  }

  set_navigation(destination: PyValue): PyDict {
    // Stored before the concatenation, which raises for a non-str destination.
    this.set('destination', destination);
    return dictOf({ status: add('Navigating to ', destination) });
  }
}

/** A Python default for an optional parameter that was not passed (an explicit `None` stays). */
function orDefault(v: PyValue | undefined, fallback: PyValue): PyValue {
  return v === undefined ? fallback : v;
}

export const vehicleControl: ApiClass<VehicleControl> = {
  className: 'VehicleControlAPI',
  stateless: false,
  create: () => new VehicleControl(),
  methods: {
    startEngine: { params: [req('ignitionMode')], run: (self, a) => self.startEngine(a[0]!) },
    fillFuelTank: { params: [req('fuelAmount')], run: (self, a) => self.fillFuelTank(a[0]!) },
    lockDoors: { params: [req('unlock'), req('door')], run: (self, a) => self.lockDoors(a[0]!, a[1]!) },
    adjustClimateControl: {
      params: [req('temperature'), opt('unit'), opt('fanSpeed'), opt('mode')],
      run: (self, a) =>
        self.adjustClimateControl(
          a[0]!,
          orDefault(a[1], 'celsius'),
          orDefault(a[2], 50n),
          orDefault(a[3], 'auto'),
        ),
    },
    get_outside_temperature_from_google: {
      params: [],
      run: (self) => self.get_outside_temperature_from_google(),
    },
    get_outside_temperature_from_weather_com: { params: [], run: () => dictOf({ error: 404n }) },
    setHeadlights: { params: [req('mode')], run: (self, a) => self.setHeadlights(a[0]!) },
    displayCarStatus: { params: [req('option')], run: (self, a) => self.displayCarStatus(a[0]!) },
    activateParkingBrake: { params: [req('mode')], run: (self, a) => self.activateParkingBrake(a[0]!) },
    pressBrakePedal: { params: [req('pedalPosition')], run: (self, a) => self.pressBrakePedal(a[0]!) },
    releaseBrakePedal: { params: [], run: (self) => self.releaseBrakePedal() },
    setCruiseControl: {
      params: [req('speed'), req('activate'), req('distanceToNextVehicle')],
      run: (self, a) => self.setCruiseControl(a[0]!, a[1]!, a[2]!),
    },
    get_current_speed: {
      params: [],
      run: (self) => self.get_current_speed(),
    },
    display_log: { params: [req('messages')], run: (_self, a) => dictOf({ log: a[0]! }) },
    estimate_drive_feasibility_by_mileage: {
      params: [req('distance')],
      run: (self, a) => dictOf({ canDrive: !lt(mul(self.get('fuelLevel'), MILE_PER_GALLON), a[0]!) }),
    },
    liter_to_gallon: { params: [req('liter')], run: (_self, a) => dictOf({ gallon: mul(a[0]!, 0.264172) }) },
    gallon_to_liter: { params: [req('gallon')], run: (_self, a) => dictOf({ liter: mul(a[0]!, 3.78541) }) },
    estimate_distance: {
      params: [req('cityA'), req('cityB')],
      run: (self, a) => self.estimate_distance(a[0]!, a[1]!),
    },
    get_zipcode_based_on_city: {
      params: [req('city')],
      run: (_self, a) => {
        const city = a[0]!;
        return dictOf({ zipcode: (typeof city === 'string' ? ZIPCODES.get(city) : undefined) ?? '00000' });
      },
    },
    set_navigation: { params: [req('destination')], run: (self, a) => self.set_navigation(a[0]!) },
    check_tire_pressure: { params: [], run: (self) => self.check_tire_pressure() },
    find_nearest_tire_shop: {
      params: [],
      run: () => dictOf({ shopLocation: '456 Oakwood Avenue, Rivermist, 83214' }),
    },
  },
};
