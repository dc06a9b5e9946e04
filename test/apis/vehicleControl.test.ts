import { describe, expect, it } from 'vitest';
import type { ScenarioContext } from '../../src/envs/bfcl/apis/api.js';
import { type VehicleControl, vehicleControl } from '../../src/envs/bfcl/apis/vehicleControl.js';
import { parsePyJson } from '../../src/envs/py/json.js';
import type { PyDict, PyValue } from '../../src/envs/py/values.js';
import { dictOf, toStateJson } from '../../src/envs/py/values.js';
import { callMethod } from '../support/api.js';

const plain: ScenarioContext = { longContext: false, constants: undefined };

/** Tiny stand-ins for the long-context tables (the real ones come from the data directory). */
function longCtx(): ScenarioContext {
  return {
    longContext: true,
    constants: new Map<string, PyValue>([
      ['CAR_STATUS_METADATA_EXTENSION', 'Manufacturer: Audi'],
      ['LONG_WEATHER_EXTENSION', dictOf({ '-1_day': dictOf({ uvIndex: 6n }) })],
      ['PARKING_BRAKE_INSTRUCTION', 'Pull the lever.'],
      ['INTERMEDIARY_CITIES', ['A', 'B']],
    ]),
  };
}

// The scenario of multi_turn_base_50.
const SCENARIO = `{"fuelLevel": 10.5, "batteryVoltage": 12.6, "engineState": "stopped", "doorStatus": {"driver": "locked",
  "passenger": "locked", "rear_left": "locked", "rear_right": "locked"}, "acTemperature": 22.0, "fanSpeed": 70,
  "acMode": "auto", "humidityLevel": 45.0, "headLightStatus": "off", "parkingBrakeStatus": "released",
  "parkingBrakeForce": 0.0, "slopeAngle": 0.0, "distanceToNextVehicle": 30.0, "cruiseStatus": "inactive",
  "destination": "None", "frontLeftTirePressure": 32.0, "frontRightTirePressure": 32.0,
  "rearLeftTirePressure": 30.0, "rearRightTirePressure": 30.0}`;

function make(configJson = SCENARIO, ctx = plain): VehicleControl {
  const inst = vehicleControl.create();
  inst.loadScenario(parsePyJson(configJson) as PyDict, ctx);
  return inst;
}

function call(inst: VehicleControl, name: string, ...args: (PyValue | undefined)[]): string {
  return callMethod(vehicleControl, inst, name, ...args);
}

const stateOf = (inst: VehicleControl, attr: string) => toStateJson(inst.publicState().get(attr)!);

describe('VehicleControlAPI', () => {
  it('loads defaults and recounts the unlocked doors', () => {
    const inst = make('{"doorStatus": {"driver": "locked", "trunk": "locked"}, "remainingUnlockedDoors": 9}');
    expect([...inst.publicState().keys()]).toEqual([
      'fuelLevel',
      'batteryVoltage',
      'engine_state',
      'remainingUnlockedDoors',
      'doorStatus',
      'acTemperature',
      'fanSpeed',
      'acMode',
      'humidityLevel',
      'headLightStatus',
      'parkingBrakeStatus',
      'brakePedalStatus',
      'distanceToNextVehicle',
      'cruiseStatus',
      'destination',
      'frontLeftTirePressure',
      'frontRightTirePressure',
      'rearLeftTirePressure',
      'rearRightTirePressure',
      'long_context',
    ]);
    expect(inst.publicState().get('remainingUnlockedDoors')).toBe(2n);
    expect(call(make('{}'), 'displayCarStatus', 'engine')).toBe('{"engineState": "stopped"}');
  });

  it('starts the engine only with locked doors and the brake fully pressed', () => {
    const inst = make();
    expect(call(inst, 'startEngine', 'START')).toBe(
      '{"error": "Brake pedal needs to be pressed when starting the engine."}',
    );
    expect(call(inst, 'pressBrakePedal', 0.5)).toBe(
      '{"brakePedalStatus": "pressed", "brakePedalForce": 500.0}',
    );
    expect(call(inst, 'startEngine', 'START')).toBe(
      '{"error": "Must press the brake fully before starting the engine."}',
    );
    // An int position stores an int force, which still equals 1000.0.
    expect(call(inst, 'pressBrakePedal', 1n)).toBe(
      '{"brakePedalStatus": "pressed", "brakePedalForce": 1000.0}',
    );
    expect(call(inst, 'displayCarStatus', 'brakePedal')).toBe(
      '{"brakePedalStatus": "pressed", "brakePedalForce": 1000}',
    );
    expect(call(inst, 'startEngine', 'STOP')).toBe('{"error": "Invalid ignition mode."}');
    expect(call(inst, 'startEngine', 'START')).toBe(
      '{"engineState": "running", "fuelLevel": 10.5, "batteryVoltage": 12.6}',
    );
    expect(call(inst, 'lockDoors', true, ['driver', 'rear_left'])).toBe(
      '{"lockStatus": "unlocked", "remainingUnlockedDoors": 2}',
    );
    expect(call(inst, 'startEngine', 'START')).toBe(
      '{"error": "All doors must be locked before starting the engine. Here are the unlocked doors: driver, rear_left"}',
    );
  });

  it('changes doors one by one until an unknown one raises', () => {
    const inst = make('{}');
    expect(call(inst, 'lockDoors', false, ['driver', 'trunk'])).toBe("Error during execution: 'trunk'");
    expect(stateOf(inst, 'doorStatus')).toMatchObject({ driver: 'locked' });
    expect(inst.publicState().get('remainingUnlockedDoors')).toBe(3n);
    // A string is iterated character by character.
    expect(call(inst, 'lockDoors', false, 'driver')).toBe("Error during execution: 'd'");
  });

  it('adjusts the climate with the defaults and echoes the input temperature', () => {
    const inst = make();
    expect(call(inst, 'adjustClimateControl', 68n, 'fahrenheit')).toBe(
      '{"currentACTemperature": 68, "climateMode": "auto", "humidityLevel": 45.0}',
    );
    expect(stateOf(inst, 'acTemperature')).toBe(20);
    expect(inst.publicState().get('fanSpeed')).toBe(50n);
    // An explicit None is not the default.
    expect(call(inst, 'adjustClimateControl', 20n, 'celsius', 10n, null)).toBe(
      '{"currentACTemperature": 20, "climateMode": null, "humidityLevel": 45.0}',
    );
    expect(call(inst, 'adjustClimateControl', 20n, 'celsius', 150n)).toBe(
      '{"error": "Fan speed must be between 0 and 100."}',
    );
    expect(call(inst, 'adjustClimateControl', 20n, 'celsius', '5')).toBe(
      "Error during execution: '<=' not supported between instances of 'int' and 'str'",
    );
    // The temperature is stored before the conversion fails.
    expect(call(inst, 'adjustClimateControl', '70', 'fahrenheit')).toBe(
      "Error during execution: unsupported operand type(s) for -: 'str' and 'int'",
    );
    expect(inst.publicState().get('acTemperature')).toBe('70');
  });

  it('stores the cruise distance before validating the speed', () => {
    const inst = make();
    expect(call(inst, 'setCruiseControl', 60n, true, 100n)).toBe(
      '{"error": "Start the engine before activating the cruise control."}',
    );
    call(inst, 'pressBrakePedal', 1.0);
    call(inst, 'startEngine', 'START');
    expect(call(inst, 'setCruiseControl', 63n, true, 100n)).toBe('{"error": "Invalid speed"}');
    expect(inst.publicState().get('distanceToNextVehicle')).toBe(100.0);
    expect(call(inst, 'setCruiseControl', '65', 1n, '80.5')).toBe(
      '{"cruiseStatus": "active", "currentSpeed": 65.0, "distanceToNextVehicle": 80.5}',
    );
    expect(call(inst, 'setCruiseControl', 'x', false, 1n)).toBe(
      "Error during execution: could not convert string to float: 'x'",
    );
  });

  it('draws speed and temperature from one seeded generator', () => {
    const inst = make();
    expect(call(inst, 'get_current_speed')).toBe('{"currentSpeed": 111.92365689097284}');
    expect(call(inst, 'get_outside_temperature_from_google')).toBe(
      '{"outsideTemperature": 31.29968928699752}',
    );
    expect(call(inst, 'get_outside_temperature_from_weather_com')).toBe('{"error": 404}');
  });

  it('answers the lookup and conversion helpers', () => {
    const inst = make();
    expect(call(inst, 'estimate_distance', '74532', '83214')).toBe('{"distance": 750.0}');
    expect(call(inst, 'estimate_distance', 83214n, 74532n)).toBe(
      '{"error": "distance not found in database."}',
    );
    expect(call(inst, 'get_zipcode_based_on_city', 'Atlantis')).toBe('{"zipcode": "00000"}');
    expect(call(inst, 'liter_to_gallon', 10n)).toBe('{"gallon": 2.6417200000000003}');
    expect(call(inst, 'gallon_to_liter', 3n)).toBe('{"liter": 11.35623}');
    expect(call(inst, 'liter_to_gallon', '1')).toBe(
      "Error during execution: can't multiply sequence by non-int of type 'float'",
    );
    expect(call(inst, 'estimate_drive_feasibility_by_mileage', 210n)).toBe('{"canDrive": true}');
    expect(call(inst, 'estimate_drive_feasibility_by_mileage', 210.5)).toBe('{"canDrive": false}');
    expect(call(inst, 'fillFuelTank', 39.5)).toBe('{"fuelLevel": 50.0}');
    expect(call(inst, 'fillFuelTank', 0.1)).toBe('{"error": "Cannot fill gas above the tank capacity."}');
    expect(call(inst, 'fillFuelTank', '1')).toBe(
      "Error during execution: '<' not supported between instances of 'str' and 'int'",
    );
    expect(call(inst, 'check_tire_pressure')).toBe(
      '{"frontLeftTirePressure": 32.0, "frontRightTirePressure": 32.0, "rearLeftTirePressure": 30.0, ' +
        '"rearRightTirePressure": 30.0, "healthy_tire_pressure": true, "car_info": {}}',
    );
    expect(call(inst, 'setHeadlights', 'auto')).toBe('{"headlightStatus": "off"}');
    expect(call(inst, 'activateParkingBrake', 'release')).toBe(
      '{"parkingBrakeStatus": "released", "_parkingBrakeForce": 0.0, "_slopeAngle": 10.0}',
    );
    expect(call(inst, 'displayCarStatus', 'parkingBrake')).toBe(
      '{"parkingBrakeStatus": "released", "parkingBrakeForce": 0.0, "slopeAngle": 10.0}',
    );
    // The destination is stored before the concatenation fails.
    expect(call(inst, 'set_navigation', 5n)).toBe(
      'Error during execution: can only concatenate str (not "int") to str',
    );
    expect(inst.publicState().get('destination')).toBe(5n);
  });

  it('adds the long-context blobs and keeps its own weather dict', () => {
    const ctx = longCtx();
    const inst = make(SCENARIO, ctx);
    expect(call(inst, 'displayCarStatus', 'fuel')).toBe(
      '{"metadata": "Manufacturer: Audi", "fuelLevel": 10.5}',
    );
    expect(call(inst, 'estimate_distance', '1', '2')).toBe(
      '{"error": "distance not found in database.", "intermediaryCities": ["A", "B"]}',
    );
    expect(call(inst, 'activateParkingBrake', 'engage')).toBe(
      '{"parkingBrakeInstruction": "Pull the lever.", "parkingBrakeStatus": "engaged", "_parkingBrakeForce": 500.0, "_slopeAngle": 10.0}',
    );
    expect(call(inst, 'check_tire_pressure')).toContain('"car_info": "Manufacturer: Audi"');
    call(inst, 'get_current_speed');
    expect(call(inst, 'get_outside_temperature_from_google')).toBe(
      '{"-1_day": {"uvIndex": 6}, "outsideTemperature": 31.29968928699752}',
    );
    // The constant itself was not written to.
    const weather = ctx.constants!.get('LONG_WEATHER_EXTENSION') as PyDict;
    expect([...weather.keys()]).toEqual(['-1_day']);
  });
});
