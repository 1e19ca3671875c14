"""``root_agent``: a scripted ADK agent that answers the user turns of the ADK
interop eval sets (hello_world, home_automation, trip_planner, elicitation,
live_non_blocking) with fixed tool calls and texts.

Some answers match the expected ones exactly, some only partly (other words,
an extra argument, an extra call), so trajectory and response-match scores
are spread over [0, 1] rather than all 1.0.
"""

from __future__ import annotations

from google.adk.agents import LlmAgent

from .scripted_llm import ScriptedLlm

TRAVEL = (
    "I want to travel from San Francisco to an European country in fall next year. "
    "I am considering London and Paris. What is your advice?"
)
ELICIT = "To book your flight to London, please provide the date of travel and the passenger's full name."


def roll_die(sides: int) -> int:
    """Roll a die with ``sides`` sides (deterministic here: always sides - 2)."""
    return sides - 2


def check_prime(nums: list[int]) -> str:
    """Say which of ``nums`` are prime."""
    primes = [n for n in nums if n > 1 and all(n % d for d in range(2, int(n**0.5) + 1))]
    return f"{', '.join(map(str, primes)) or 'No'} numbers are prime."


def set_device_info(location: str, device_id: str, status: str) -> str:
    """Set a device's status."""
    return f"Device {device_id} in {location} is now {status}."


def get_device_info(device_id: str, location: str = "") -> dict:
    """Read a device's status."""
    return {"device_id": device_id, "location": location or "unknown", "status": "OFF"}


def trigger_elicitation(missing_entities: list[str], elicitation_prompt: str) -> dict:
    """Ask the user for missing details."""
    return {"asked": missing_entities, "prompt": elicitation_prompt}


def book_flight(destination: str, date: str, passenger_name: str) -> dict:
    """Book a flight."""
    return {"booking": "BK-1", "destination": destination, "date": date, "passenger": passenger_name}


ROOT_SCRIPT = {
    # hello_world_agent/roll_die.test.json
    "Hi who are you?": [
        {"text": "I am a data processing agent. I can roll dice and check if the results are prime numbers."}
    ],
    "What can you do?": [{"text": "I can roll dice of different sizes and tell you whether the results are prime."}],
    "Can you roll a die with 6 sides": [
        {"text": "Rolling the die now.", "calls": [("roll_die", {"sides": 6})]},
        {"text": "I rolled a 6-sided die and got 4."},
    ],
    # home_automation_agent
    "Turn off device_3 in the Bedroom.": [
        {"calls": [("set_device_info", {"location": "Bedroom", "device_id": "device_3", "status": "OFF"})]},
        {"text": "I have set the device_3 status to off."},
    ],
    "Turn off device_2 in the Bedroom.": [
        {"calls": [("set_device_info", {"location": "Bedroom", "device_id": "device_2", "status": "OFF"})]},
        {"text": "I have set the device 2 status to off."},
    ],
    "What's the status of device_2 in the Bedroom?": [
        # one argument more than expected: an EXACT mismatch
        {"calls": [("get_device_info", {"device_id": "device_2", "location": "Bedroom"})]},
        {"text": "Status of device_2 is off."},
    ],
    "Turn on device_2 in the Bedroom.": [
        # an extra call before the expected one: EXACT fails, IN_ORDER and ANY_ORDER pass
        {"calls": [("get_device_info", {"device_id": "device_2"})]},
        {"calls": [("set_device_info", {"location": "Bedroom", "device_id": "device_2", "status": "ON"})]},
        {"text": "Device 2 in the Bedroom is now on."},
    ],
    # trip_planner_agent
    "Based on my interests, where should I go, Yosemite national park or Los Angeles?": [
        {"text": "Given your interests in food, shopping and museums, Los Angeles is a better choice than Yosemite."}
    ],
    "Hi, who are you? What can you do?": [
        {
            "text": "I am trip_planner, and my goal is to plan the best trip ever. I can describe why a city was "
            "chosen, list its top attractions, and provide a detailed itinerary for each day of the trip.\n"
        }
    ],
    TRAVEL: [{"calls": [("transfer_to_agent", {"agent_name": "indentify_agent"})]}],
    # elicitation_agent
    "Book a flight to London": [
        {
            "calls": [
                ("trigger_elicitation", {"missing_entities": ["date", "passenger_name"], "elicitation_prompt": ELICIT})
            ]
        },
        {"text": "Please give me the travel date and the passenger's full name."},
    ],
    "The traveler is Alice and the date is 2026-05-15": [
        {"calls": [("book_flight", {"destination": "London", "date": "2026-05-15", "passenger_name": "Alice"})]},
        {"text": "Successfully booked flight to London on 2026-05-15 for Alice."},
    ],
    # live_non_blocking_tool_agent (scripted case)
    "Please start a slow background task to index my documents.": [
        {"text": "Started indexing your documents in the background."}
    ],
    "While that runs, what is two plus two?": [{"text": "Two plus two is four."}],
}

IDENTIFY_SCRIPT = {
    TRAVEL: [
        {
            "text": "I can help you compare London and Paris for your fall trip from San Francisco: weather, "
            "seasonal events, flight costs and your interests."
        }
    ]
}

identify_agent = LlmAgent(
    name="indentify_agent",
    model=ScriptedLlm(model="scripted-identify", script=IDENTIFY_SCRIPT),
    description="Picks the best city for a trip.",
    instruction="Compare the candidate cities.",
)

root_agent = LlmAgent(
    name="scripted_root",
    model=ScriptedLlm(model="scripted-llm", script=ROOT_SCRIPT),
    instruction="You are a helpful assistant with dice, home automation and travel tools.",
    tools=[roll_die, check_prime, set_device_info, get_device_info, trigger_elicitation, book_flight],
    sub_agents=[identify_agent],
)
